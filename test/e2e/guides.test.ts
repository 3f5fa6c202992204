/**
 * The website's guides, run (constructs/website/guides.ts): every `sh` block
 * with bash and every `yaml` block with `kubectl apply -f -`, in page order,
 * against a platform with the packages installed as the operator installs
 * them, the core, the driver and MetalLB. The admin guide runs as a cluster
 * admin; the tenant guide as a tenant admin of tenant-demo (impersonated, its
 * kubectl context in that namespace, with Cozystack's tenant roles). A block
 * that fails fails the test, naming the page, the block and what it printed.
 * Then the admin guide's recycling runs again, now that the tenant guide has
 * left Released addresses, and they must come back Available.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { blocksOf } from '../../constructs/website/markdown.js';
import { GUIDE_PAGES } from '../../constructs/website/website.js';
import { GUIDE_PUBLIC_CLASS, GUIDE_TENANT_NAMESPACE } from '../../constructs/website/guides.js';
import { synthesizedArtifact } from '../support/synth.js';
import { KUBECTL, removeToolState } from './support/deputies/tools.js';
import { crd, startPlatform, type Cr, type Platform } from './support/platform.js';
import { waitFor } from './support/ports.js';
import { recordScenario } from './support/summary.js';
import { bindTenant, createTenantRoles } from './support/tenants.js';

const TENANT = { name: 'carol', groups: [`${GUIDE_TENANT_NAMESPACE}-admin`] };
/** The longest a block may take: its own `kubectl wait`s are bounded below this. */
const BLOCK_TIMEOUT_MS = 300_000;

let platform: Platform;
let work: string;
const kubeconfigs: Record<'admin' | 'tenant', string> = { admin: '', tenant: '' };

/** Runs one block as a reader; rejects with the block and its output. */
function runBlock(kind: string, body: string, kubeconfig: string): Promise<string> {
  const [command, args, input] =
    kind === 'sh' ? ['bash', ['-euo', 'pipefail', '-c', body], undefined] : [KUBECTL, ['apply', '-f', '-'], body];
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      args as string[],
      { env: { ...process.env, KUBECONFIG: kubeconfig, HOME: work, PATH: `${join(KUBECTL, '..')}:${process.env.PATH}` }, timeout: BLOCK_TIMEOUT_MS, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`)) : resolve(stdout)),
    );
    if (input !== undefined) {
      child.stdin!.end(input);
    }
  });
}

/** Every runnable block of a page, run in order; the count of blocks run. */
async function runPage(path: string, reader: 'admin' | 'tenant'): Promise<number> {
  const text = readFileSync(join(synthesizedArtifact(), path), 'utf8');
  const blocks = blocksOf(text).filter((b) => b.kind === 'sh' || b.kind === 'yaml');
  for (const [i, b] of blocks.entries()) {
    try {
      await runBlock(b.kind, b.body, kubeconfigs[reader]);
    } catch (error) {
      throw new Error(`${path}, block ${i + 1} of ${blocks.length} (${b.kind}), as ${reader}:\n${b.body}\n${(error as Error).message}`);
    }
  }
  return blocks.length;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'e2e-guides-'));
  platform = await startPlatform([TENANT]);
  const admin = platform.admin;
  // As Cozystack makes a tenant: its namespace, and its admins bound to cozy:tenant:admin there.
  await admin.core.createNamespace({ body: { metadata: { name: GUIDE_TENANT_NAMESPACE } } });
  await createTenantRoles(admin);
  await bindTenant(admin, GUIDE_TENANT_NAMESPACE, 'admin', TENANT.groups[0]!);
  await waitFor('cozy:tenant:admin to aggregate the claim rules', async () =>
    JSON.stringify((await admin.rbac.readClusterRole({ name: 'cozy:tenant:admin' })).rules ?? []).includes('ipaddressclaims'),
  60_000);
  await platform.startCore('address-controller');
  await platform.startDriver('metallb-iad');
  kubeconfigs.admin = platform.cluster.kubeconfig();
  // The tenant's kubeconfig: the admin's credentials, impersonating the tenant, in its namespace.
  const config = parse(readFileSync(kubeconfigs.admin, 'utf8')) as {
    contexts: { context: Record<string, unknown> }[];
    users: { user: Record<string, unknown> }[];
  };
  for (const c of config.contexts) c.context.namespace = GUIDE_TENANT_NAMESPACE;
  for (const u of config.users) Object.assign(u.user, { as: TENANT.name, 'as-groups': TENANT.groups });
  kubeconfigs.tenant = join(work, 'tenant.kubeconfig');
  writeFileSync(kubeconfigs.tenant, stringify(config));
}, 600_000);

afterAll(async () => {
  await platform?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
  removeToolState(); // the kubectl cache the tools module made when it was imported
});

describe('the website’s guides run as written', () => {
  it('the admin guide, as a cluster admin: classes offered, a tenant let in, a quota, what is used', async () => {
    const ran = await runPage(GUIDE_PAGES.admin, 'admin');
    expect(ran).toBeGreaterThan(4);
    recordScenario(`guides: the admin guide's ${ran} blocks run as written`);
  }, 900_000);

  it('the tenant guide, as a tenant admin in its namespace: reserve, attach, move, share, a limit, give back', async () => {
    const ran = await runPage(GUIDE_PAGES.tenant, 'tenant');
    expect(ran).toBeGreaterThan(6);
    recordScenario(`guides: the tenant guide's ${ran} blocks run as written`);
  }, 900_000);

  it('the admin guide’s recycling makes the tenant’s Released addresses Available again', async () => {
    const admin = platform.admin;
    const released = async () =>
      ((await admin.custom.listClusterCustomObject({ ...crd('ipaddresses') })) as { items: Cr[] }).items.filter(
        (a) => a.spec.className === GUIDE_PUBLIC_CLASS && a.status?.phase === 'Released',
      );
    await waitFor('the tenant guide’s claims Released', async () => (await released()).length === 2, 60_000);
    const names = (await released()).map((a) => a.metadata.name!);
    const text = readFileSync(join(synthesizedArtifact(), GUIDE_PAGES.admin), 'utf8');
    const recycle = blocksOf(text).find((b) => b.kind === 'sh' && b.body.includes('"Released"'))!;
    await runBlock('sh', recycle.body, kubeconfigs.admin);
    await waitFor('recycled addresses Available', async () => {
      const phases = await Promise.all(names.map(async (name) => ((await admin.custom.getClusterCustomObject({ ...crd('ipaddresses'), name })) as Cr).status?.phase));
      return phases.every((p) => p === 'Available');
    }, 60_000);
    recordScenario('guides: the admin guide recycles the Released addresses the tenant guide left');
  }, 300_000);
});
