/**
 * The controllers' images, built without a Docker engine (npm run images):
 * reproducible (two builds, one digest), pushed with the OCI client synth push uses (lib/oci/) to a
 * real registry, stamped into a copy of constructs/images.ts, and run: the
 * image's rootfs unpacked layer by layer and its ENTRYPOINT started in a chroot
 * as its USER against a real apiserver, until /readyz answers 200.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGES } from '../../constructs/images.js';
import { RELEASE_VERSION } from '../../constructs/version.js';
import { OCI_MANIFEST_MEDIA_TYPE } from '../../lib/oci/layout.js';
import { stampDigest, stampedDigest } from '../../hack/images.js';
import { RUNTIME_NODE_FLAGS } from '../../hack/lib/node-flags.js';
import { REPO_ROOT } from '../support/synth.js';
import { ADMIN, startCluster, type Cluster } from './support/cluster.js';
import { freePort, waitFor } from './support/ports.js';
import { startRegistry, type Registry } from './support/registry.js';
import { scenarioTest } from './support/summary.js';

const scenario = scenarioTest(it);
const CONTROLLER = 'address-controller';

function images(...args: string[]) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'hack', 'images.ts'), ...args], { cwd: REPO_ROOT, encoding: 'utf8' });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return result.stdout;
}

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));
const blob = (layout: string, digest: string) => join(layout, 'blobs', 'sha256', digest.slice('sha256:'.length));

interface ImageConfigJson {
  config: { User: string; Entrypoint: string[]; Cmd: string[]; WorkingDir: string };
}

function manifestOf(layout: string): { digest: string; manifest: { config: { digest: string }; layers: { digest: string }[] } } {
  const digest = readJson(join(layout, 'index.json')).manifests[0].digest as string;
  return { digest, manifest: readJson(blob(layout, digest)) };
}

/** Every blob of a layout, by name, as hex digests of their bytes: two builds must agree on all of them. */
function layoutFiles(layout: string): string[] {
  return ['oci-layout', 'index.json', ...readdirSync(join(layout, 'blobs', 'sha256')).map((b) => `blobs/sha256/${b}`)].sort();
}

let out: string;
let first: string;
let cluster: Cluster | undefined;
let registry: Registry | undefined;
const children: ReturnType<typeof spawn>[] = [];

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'e2e-images-'));
  first = join(out, 'one');
  images(CONTROLLER, '--out', first);
}, 600_000);

afterAll(async () => {
  for (const child of children) {
    child.kill('SIGKILL');
  }
  await registry?.stop();
  await cluster?.stop();
  if (out) {
    rmSync(out, { recursive: true, force: true });
  }
});

describe('controller images built without a Docker engine', () => {
  scenario('two builds have one digest, byte for byte', () => {
    const second = join(out, 'two');
    const printed = images(CONTROLLER, '--out', second, '--skip-build');
    const one = manifestOf(join(first, CONTROLLER));
    const two = manifestOf(join(second, CONTROLLER));
    expect(two.digest).toBe(one.digest);
    expect(printed).toBe(`images: ${CONTROLLER} ${one.digest} -> ${join(second, CONTROLLER)}\n`);
    expect(layoutFiles(join(second, CONTROLLER))).toEqual(layoutFiles(join(first, CONTROLLER)));
    expect(one.manifest.layers).toHaveLength(3);
  });

  scenario('the config is the Dockerfile\'s: nonroot USER, ENTRYPOINT and CMD', () => {
    const layout = join(first, CONTROLLER);
    const config = readJson(blob(layout, manifestOf(layout).manifest.config.digest)) as ImageConfigJson;
    expect(config.config.User).toBe('65532:65532');
    expect(config.config.Entrypoint).toEqual(['/nodejs/bin/node', ...RUNTIME_NODE_FLAGS, '/app/main.mjs']);
    expect(config.config.Cmd).toEqual(['--leader-elect', '--health-probe-bind-address=:8081', '--metrics-bind-address=:8080']);
  });

  scenario('pushes to a real registry with synth push\'s client; --stamp writes the digest into the pins', async () => {
    registry = await startRegistry();
    const pins = join(out, 'images.ts');
    copyFileSync(join(REPO_ROOT, 'constructs', 'images.ts'), pins);
    stampDigest(pins, CONTROLLER, `sha256:${'0'.repeat(64)}`); // a pin --stamp must change
    const printed = images(CONTROLLER, '--out', join(out, 'pushed'), '--skip-build', '--push', registry.address, '--plain-http', '--stamp', '--images-file', pins);
    const { digest } = manifestOf(join(first, CONTROLLER));
    const repository = IMAGES.addressController.repository.replace(/^[^/]+\//, '');
    expect(printed).toContain(`pushed ${registry.address}/${repository}:${RELEASE_VERSION}; stamped into ${pins}`);
    const served = await fetch(`http://${registry.address}/v2/${repository}/manifests/${RELEASE_VERSION}`, { headers: { accept: OCI_MANIFEST_MEDIA_TYPE } });
    expect(served.headers.get('docker-content-digest')).toBe(digest);
    const stamped = readFileSync(pins, 'utf8');
    expect(stamped).toMatch(new RegExp(`addressController: \\{[\\s\\S]*?digest: '${digest}',`));
    // Only that pin changed: metallb-iad keeps its own.
    expect(stampedDigest(pins, 'metallb-iad')).toBe(IMAGES.metallbIad.digest);
  });

  scenario('its controller reaches Ready from the unpacked rootfs, as the image\'s USER', async () => {
    const layout = join(first, CONTROLLER);
    const { manifest } = manifestOf(layout);
    const rootfs = join(out, 'rootfs');
    mkdirSync(rootfs);
    for (const layer of manifest.layers) {
      const untar = spawnSync('tar', ['-xzf', blob(layout, layer.digest), '-C', rootfs], { encoding: 'utf8' });
      expect(untar.stderr).toBe('');
    }
    const config = readJson(blob(layout, manifest.config.digest)) as ImageConfigJson;

    cluster = await startCluster();
    const admin = cluster.client(ADMIN);
    const objects = k8s.KubernetesObjectApi.makeApiClient(admin);
    const crds = join(REPO_ROOT, 'dist', 'charts', CONTROLLER, 'crds');
    for (const file of readdirSync(crds)) {
      for (const doc of parseAllDocuments(readFileSync(join(crds, file), 'utf8'))) {
        await objects.create(doc.toJS() as k8s.KubernetesObject);
      }
    }
    writeFileSync(join(rootfs, 'tmp', 'kubeconfig'), readFileSync(cluster.kubeconfig(ADMIN)));
    const probe = await freePort();
    const metrics = await freePort();
    const args = [`--kubeconfig=/tmp/kubeconfig`, `--health-probe-bind-address=127.0.0.1:${probe}`, `--metrics-bind-address=127.0.0.1:${metrics}`];
    // chroot needs root (CI runs as root); unshare maps root into a user namespace otherwise.
    const asRoot = process.getuid?.() === 0;
    const command = asRoot ? 'chroot' : 'unshare';
    const prefix = asRoot ? [`--userspec=${config.config.User}`, rootfs] : ['--user', '--map-root-user', 'chroot', rootfs];
    let log = '';
    const child = spawn(command, [...prefix, ...config.config.Entrypoint, ...args], {
      // Nothing of this machine's environment leaks in; PATH only finds chroot itself.
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
      cwd: '/',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    child.on('error', (error) => (log += `spawn ${command}: ${error.message}`));
    child.stdout!.on('data', (d) => (log += d));
    child.stderr!.on('data', (d) => (log += d));
    await waitFor(`the controller in the rootfs /readyz (${log.slice(-500)})`, async () => {
      try {
        return (await fetch(`http://127.0.0.1:${probe}/readyz`)).status === 200;
      } catch {
        return false;
      }
    }, 60_000);
    if (asRoot) {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      expect(status).toMatch(/^Uid:\s+65532\s/m);
    }
    expect(log).toContain('"msg":"starting"');
    const metricsText = await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text();
    expect(metricsText).toContain('controller_runtime_reconcile_total');
  });
});
