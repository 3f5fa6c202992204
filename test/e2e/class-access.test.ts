/**
 * Who may draw from a class (docs/access.md), on a real apiserver with the
 * packages installed as the operator installs them (the class-access
 * ValidatingAdmissionPolicy among them), the core and the driver running,
 * and MetalLB assigning:
 *
 * - class `premium` selects namespaces labelled tier=premium: tenant-a is, tenant-b
 *   is not. Tenant-b's admin is refused at admission (403 naming the class and the
 *   rule); a cluster admin's claim there is admitted and waits, ClassNotAllowed;
 * - the label taken from tenant-a under its Bound claim: the claim keeps its
 *   address, ClassAllowed=False says so; labelled again, True;
 * - class `open` allows 2 claims a namespace: 20 claims created at once end with
 *   exactly 2 Bound, the rest ClassLimitReached, and the core's metrics count 2;
 *   one deleted, the next takes its place;
 * - a tenant, through kubectl, lists the classes (selector, limit, free capacity),
 *   reads its own namespace's labels, and still cannot read the addresses or
 *   another tenant's claims.
 */
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl, removeToolState } from './support/deputies/tools.js';
import { apis, expectRejected } from './support/kube.js';
import { createClaim, createClass, crd, startPlatform, type Cr, type Platform } from './support/platform.js';
import { waitFor } from './support/ports.js';
import { recordScenario } from './support/summary.js';
import { bindTenant, createTenantRoles } from './support/tenants.js';
import type { ControllerProcess } from './support/controller-process.js';

const ALICE = { name: 'alice', groups: ['tenant-a-admin'] };
const BOB = { name: 'bob', groups: ['tenant-b-admin'] };
const PREMIUM = 'premium';
const OPEN = 'open';
const LIMIT = 2;
const BURST = 20;

let platform: Platform;
let core: ControllerProcess;
const admin = () => platform.admin;
const as = (user: { name: string }) => apis(platform.cluster.client(user.name));
const claimBody = (name: string, namespace: string, className: string) => ({
  apiVersion: `${crd('x').group}/${crd('x').version}`,
  kind: 'IPAddressClaim',
  metadata: { name, namespace },
  spec: { className },
});
const getClaim = async (name: string, namespace: string) => (await admin().custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace, name })) as Cr;
const conditionOf = (claim: Cr, type: string) => (claim.status?.conditions as k8s.V1Condition[] | undefined)?.find((c) => c.type === type);
const label = async (namespace: string, labels: Record<string, string | null>) =>
  admin().core.patchNamespace({ name: namespace, body: { metadata: { labels } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
/** kubectl as a user, impersonated by the admin's kubeconfig (impersonation adds system:authenticated). */
const kubectlAs = (user: { name: string; groups: string[] }, args: string[], input?: string) =>
  kubectl(platform.cluster.kubeconfig(), [`--as=${user.name}`, ...user.groups.map((g) => `--as-group=${g}`), ...args], input);
const kubectlFails = async (user: { name: string; groups: string[] }, args: string[], input?: string) => {
  const error = await kubectlAs(user, args, input).then(
    () => undefined,
    (e: Error) => e.message,
  );
  expect(error, `kubectl ${args.join(' ')} as ${user.name} should fail`).toBeDefined();
  return error!;
};

beforeAll(async () => {
  platform = await startPlatform([ALICE, BOB]);
  await createTenantRoles(admin());
  await bindTenant(admin(), 'tenant-a', 'admin', ALICE.groups[0]!);
  await bindTenant(admin(), 'tenant-b', 'admin', BOB.groups[0]!);
  await waitFor('cozy:tenant:admin to aggregate the claim rules', async () =>
    JSON.stringify((await admin().rbac.readClusterRole({ name: 'cozy:tenant:admin' })).rules ?? []).includes('ipaddressclaims'),
  60_000);
  await label('tenant-a', { tier: 'premium' });
  await createClass(admin(), PREMIUM, ['198.51.100.0/30'], 'Delete', { namespaceSelector: { matchLabels: { tier: 'premium' } } });
  await createClass(admin(), OPEN, ['203.0.113.0/27'], 'Delete', { maxClaimsPerNamespace: LIMIT });
  core = await platform.startCore('address-controller');
  await platform.startDriver('metallb-iad');
}, 600_000);

afterAll(async () => {
  await platform?.stop();
  removeToolState();
});

describe('a class restricted to namespaces', () => {
  it('a tenant of a namespace the class does not select is refused at admission, naming the class and the rule; a class it may use admits it', async () => {
    await expectRejected(
      as(BOB).custom.createNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: 'tenant-b', body: claimBody('web', 'tenant-b', PREMIUM) }),
      403,
      "bob may not claim from IPAddressClass premium in namespace tenant-b: the class's spec.namespaceSelector does not select the namespace's labels",
    );
    await as(BOB).custom.createNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: 'tenant-b', body: claimBody('open-1', 'tenant-b', OPEN) });
    await waitFor('tenant-b/open-1 Bound', async () => (await getClaim('open-1', 'tenant-b')).status?.phase === 'Bound', 60_000);
    await as(ALICE).custom.createNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: 'tenant-a', body: claimBody('web', 'tenant-a', PREMIUM) });
    await waitFor('tenant-a/web Bound', async () => (await getClaim('web', 'tenant-a')).status?.phase === 'Bound', 60_000);
    recordScenario('class access: a tenant refused at admission for a class it may not use, admitted for one it may');
  });

  it('a trusted caller’s claim for that namespace is admitted, and the core keeps it Pending: ClassNotAllowed, nothing provisioned', async () => {
    await createClaim(admin(), 'by-admin', { className: PREMIUM }, 'tenant-b');
    await waitFor('tenant-b/by-admin ClassNotAllowed', async () => conditionOf(await getClaim('by-admin', 'tenant-b'), 'Bound')?.reason === 'ClassNotAllowed', 30_000);
    await new Promise((r) => setTimeout(r, 3000)); // the driver had its chance to provision, and did not
    const claim = await getClaim('by-admin', 'tenant-b');
    expect(claim.status?.phase).toBe('Pending');
    expect(claim.status?.addresses ?? []).toEqual([]);
    expect(conditionOf(claim, 'Bound')?.message).toBe(
      "namespace tenant-b may not draw from IPAddressClass premium: its spec.namespaceSelector (tier=premium) does not select the namespace's labels",
    );
    const placeholders = await admin().core.listNamespacedService({ namespace: 'cozy-metallb-iad' });
    expect(placeholders.items.filter((s) => JSON.stringify(s.metadata?.annotations ?? {}).includes('by-admin'))).toEqual([]);
    const events = await admin().core.listNamespacedEvent({ namespace: 'tenant-b', fieldSelector: 'involvedObject.name=by-admin' });
    expect(events.items.map((e) => `${e.type} ${e.reason}`)).toContain('Warning ClassNotAllowed');
    recordScenario('class access: a trusted caller’s claim for a forbidden namespace stays Pending, ClassNotAllowed');
  });

  it('the label taken from a namespace under its Bound claim: the claim keeps its address, ClassAllowed=False; labelled again, True; the waiting claim binds once its namespace is', async () => {
    const before = await getClaim('web', 'tenant-a');
    await label('tenant-a', { tier: null });
    await waitFor('ClassAllowed False', async () => conditionOf(await getClaim('web', 'tenant-a'), 'ClassAllowed')?.status === 'False', 30_000);
    const kept = await getClaim('web', 'tenant-a');
    expect(kept.status?.phase).toBe('Bound');
    expect(kept.status?.addresses).toEqual(before.status?.addresses);
    expect(conditionOf(kept, 'ClassAllowed')?.message).toContain('the claim keeps the addresses it holds');
    const address = (await admin().custom.getClusterCustomObject({ ...crd('ipaddresses'), name: before.status!.addresses[0].name })) as Cr;
    expect(address.status?.phase).toBe('Bound');
    // A tenant can still edit (label) its claim: only a spec change is judged at admission.
    await as(ALICE).custom.patchNamespacedCustomObject(
      { ...crd('ipaddressclaims'), namespace: 'tenant-a', name: 'web', body: { metadata: { labels: { app: 'web' } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );

    await label('tenant-a', { tier: 'premium' });
    await waitFor('ClassAllowed True', async () => conditionOf(await getClaim('web', 'tenant-a'), 'ClassAllowed')?.status === 'True', 30_000);
    await label('tenant-b', { tier: 'premium' });
    await waitFor('tenant-b/by-admin Bound', async () => (await getClaim('by-admin', 'tenant-b')).status?.phase === 'Bound', 60_000);
    recordScenario('class access: the selector changed under a Bound claim: address kept, ClassAllowed says so');
  });
});

describe('a tenant’s claim made while allowed, refused by the core once the rule changes', () => {
  it('a claim waiting for a full class when its namespace stops matching: ClassNotAllowed, its reservation withdrawn; the Bound one keeps its address', async () => {
    // tiny: one address. Alice binds it, and her second claim waits for the class to have room.
    await createClass(admin(), 'tiny', ['192.0.2.10/32'], 'Delete', { namespaceSelector: { matchLabels: { tier: 'premium' } } });
    for (const name of ['tiny-1', 'tiny-2']) {
      await as(ALICE).custom.createNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: 'tenant-a', body: claimBody(name, 'tenant-a', 'tiny') });
      await waitFor(`${name} judged`, async () => conditionOf(await getClaim(name, 'tenant-a'), 'Bound') !== undefined, 30_000);
    }
    await waitFor('tiny-1 Bound', async () => (await getClaim('tiny-1', 'tenant-a')).status?.phase === 'Bound', 60_000);
    await waitFor('tiny-2 waits for room', async () => conditionOf(await getClaim('tiny-2', 'tenant-a'), 'Provisioned')?.reason === 'ClassExhausted', 60_000);
    // The admin narrows the class: tenant-a no longer matches.
    await admin().custom.patchClusterCustomObject(
      { ...crd('ipaddressclasses'), name: 'tiny', body: { spec: { namespaceSelector: { matchLabels: { tier: 'gold' } } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await waitFor('tiny-2 ClassNotAllowed', async () => conditionOf(await getClaim('tiny-2', 'tenant-a'), 'Bound')?.reason === 'ClassNotAllowed', 30_000);
    // The driver stops on the core's word: it withdraws tiny-2's reservation and says nothing more of the class's room.
    await waitFor('tiny-2’s Provisioned condition gone', async () => conditionOf(await getClaim('tiny-2', 'tenant-a'), 'Provisioned') === undefined, 30_000);
    const tiny1 = await getClaim('tiny-1', 'tenant-a');
    expect(tiny1.status?.phase).toBe('Bound');
    expect(tiny1.status?.addresses).toEqual([expect.objectContaining({ address: '192.0.2.10' })]);
    expect(conditionOf(tiny1, 'ClassAllowed')).toMatchObject({ status: 'False', reason: 'ClassNotAllowed' });
    // Freed, the address does not go to tiny-2 either.
    await admin().custom.deleteNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: 'tenant-a', name: 'tiny-1' });
    await new Promise((r) => setTimeout(r, 3000));
    expect((await getClaim('tiny-2', 'tenant-a')).status?.phase).toBe('Pending');
    recordScenario('class access: a tenant’s waiting claim refused by the core once the rule changed; the Bound one kept its address');
  });
});

describe('a per-class, per-namespace limit', () => {
  const names = Array.from({ length: BURST }, (_, i) => `burst-${String(i).padStart(2, '0')}`);

  it(`${BURST} concurrent claims against a limit of ${LIMIT}: exactly ${LIMIT} Bound, the rest ClassLimitReached with the usage; never one over`, async () => {
    await Promise.all(names.map((n) => as(ALICE).custom.createNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: 'tenant-a', body: claimBody(n, 'tenant-a', OPEN) })));
    const verdicts = async () => Promise.all(names.map(async (n) => {
      const claim = await getClaim(n, 'tenant-a');
      return { name: n, phase: claim.status?.phase, reason: conditionOf(claim, 'Bound')?.reason, message: conditionOf(claim, 'Bound')?.message };
    }));
    let seen: Awaited<ReturnType<typeof verdicts>> = [];
    let mostBound = 0;
    await waitFor(`${LIMIT} Bound and ${BURST - LIMIT} ClassLimitReached`, async () => {
      seen = await verdicts();
      mostBound = Math.max(mostBound, seen.filter((v) => v.phase === 'Bound').length);
      return seen.filter((v) => v.phase === 'Bound').length === LIMIT && seen.filter((v) => v.reason === 'ClassLimitReached').length === BURST - LIMIT;
    }, 60_000);
    // Settled: another 3 s changes nothing, and no sample ever saw more than the limit.
    await new Promise((r) => setTimeout(r, 3000));
    const after = await verdicts();
    expect(after.map((v) => v.phase)).toEqual(seen.map((v) => v.phase));
    expect(mostBound).toBe(LIMIT);
    const waiting = after.find((v) => v.reason === 'ClassLimitReached')!;
    expect(waiting.message).toMatch(new RegExp(`^namespace tenant-a holds ${LIMIT} claims of IPAddressClass open, whose spec.maxClaimsPerNamespace is ${LIMIT} \\(burst-\\d\\d, burst-\\d\\d\\); waiting until one is deleted$`));
    const metrics = (await core.get('/metrics')).body;
    expect(metrics).toContain(`cozy_addresses_class_namespace_claims{class="open",namespace="tenant-a"} ${LIMIT}`);
    expect(metrics).toContain(`cozy_addresses_class_namespace_limit{class="open"} ${LIMIT}`);
    recordScenario(`class access: ${BURST} concurrent claims against a per-class limit of ${LIMIT}: exactly ${LIMIT} Bound`);
  });

  it('one Bound claim deleted: exactly one waiting claim takes its place', async () => {
    const bound: string[] = [];
    for (const n of names) {
      if ((await getClaim(n, 'tenant-a')).status?.phase === 'Bound') bound.push(n);
    }
    await admin().custom.deleteNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: 'tenant-a', name: bound[0]! });
    const count = async () => {
      let n = 0;
      for (const name of names.filter((x) => x !== bound[0])) {
        if ((await getClaim(name, 'tenant-a')).status?.phase === 'Bound') n += 1;
      }
      return n;
    };
    await waitFor(`${LIMIT} Bound again`, async () => (await count()) === LIMIT, 60_000);
    await new Promise((r) => setTimeout(r, 2000));
    expect(await count()).toBe(LIMIT);
    recordScenario('class access: a claim deleted under the limit: exactly one waiting claim takes its place');
  });
});

describe('what a tenant sees', () => {
  it('kubectl get ipclass as a tenant: the classes, who may use them, the limit and what is free; its own namespace’s labels; not the addresses, not another tenant’s claims', async () => {
    const table = (await kubectlAs(ALICE, ['get', 'ipclass'])).stdout;
    const [header, ...rows] = table.trimEnd().split('\n');
    // Cells by the header's column offsets: an empty cell (a class without LBClass) has no text to split on.
    const columns = [...header!.matchAll(/\S+/g)].map((m) => ({ name: m[0], at: m.index! }));
    expect(columns.map((c) => c.name)).toEqual(expect.arrayContaining(['NAME', 'NAMESPACES', 'PERNAMESPACE', 'CAPACITY', 'INUSE', 'FREE']));
    const cell = (row: string, column: string) => {
      const i = columns.findIndex((c) => c.name === column);
      return row.slice(columns[i]!.at, columns[i + 1]?.at ?? row.length).trim();
    };
    const premium = rows.find((r) => r.startsWith(`${PREMIUM} `))!;
    const open = rows.find((r) => r.startsWith(`${OPEN} `))!;
    process.stdout.write(`kubectl get ipclass, as a tenant:\n${table}`);
    expect(cell(premium, 'NAMESPACES')).toBe('{"matchLabels":{"tier":"premium"}}');
    expect(cell(open, 'NAMESPACES')).toBe(''); // no selector: every namespace
    expect(cell(open, 'PERNAMESPACE')).toBe(String(LIMIT));
    expect(Number(cell(premium, 'FREE'))).toBeGreaterThanOrEqual(0);
    expect(Number(cell(open, 'CAPACITY'))).toBe(32);
    const labels = (await kubectlAs(ALICE, ['get', 'namespace', 'tenant-a', '--show-labels'])).stdout;
    expect(labels).toContain('tier=premium');
    // A server-side dry run tells a tenant whether a claim would be admitted, without making it.
    // (tiny selects tier=gold by now, which no namespace carries.)
    const manifest = (namespace: string, className: string) => JSON.stringify(claimBody('would-be', namespace, className));
    expect((await kubectlAs(ALICE, ['create', '--dry-run=server', '-f', '-'], manifest('tenant-a', PREMIUM))).stdout).toContain('created (server dry run)');
    expect(await kubectlFails(BOB, ['create', '--dry-run=server', '-f', '-'], manifest('tenant-b', 'tiny'))).toContain('bob may not claim from IPAddressClass tiny in namespace tenant-b');
    for (const args of [
      ['get', 'ipaddresses.local.sdn.cozystack.io'],
      ['get', 'ipclaim', '-n', 'tenant-b'],
      ['get', 'namespace', 'tenant-b'],
    ]) {
      expect(await kubectlFails(ALICE, args)).toMatch(/Forbidden|forbidden/);
    }
    recordScenario('class access: a tenant lists classes with kubectl (selector, limit, free) and reads no addresses or other tenants’ claims');
  });
});
