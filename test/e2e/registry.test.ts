import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactDigest, synthesize } from '../../synth/artifact.js';
import { OCI_MANIFEST_MEDIA_TYPE } from '../../synth/oci.js';
import { REPO_ROOT, synthesizedArtifact } from '../support/synth.js';
import { freePort } from './support/ports.js';
import { startRegistry, type Registry } from './support/registry.js';
import { scenarioTest } from './support/summary.js';

const scenario = scenarioTest(it);

const sha = (bytes: ArrayBuffer) => `sha256:${createHash('sha256').update(Buffer.from(bytes)).digest('hex')}`;

function push(registry: Registry, ...extra: string[]) {
  return spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      join(REPO_ROOT, 'synth', 'main.ts'),
      'push',
      '--registry',
      registry.address,
      '--plain-http',
      '--layout',
      join(synthesizedArtifact(), 'cozystack-packages'),
      ...extra,
    ],
    { cwd: REPO_ROOT, encoding: 'utf8' },
  );
}

describe('synth push against a real registry on loopback', () => {
  let registry: Registry;
  beforeAll(async () => {
    registry = await startRegistry();
  });
  afterAll(async () => {
    await registry?.stop();
  });

  scenario('uploads the artifact, which pulls back with the recorded digest', async () => {
    const digest = artifactDigest(synthesize());
    const result = push(registry, '--tag', 'v0.1.0');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(`synth push: ${registry.address}/cozystack/cozystack/cozystack-packages:v0.1.0 is ${digest} (read back and verified)\n`);

    const base = `http://${registry.address}/v2/cozystack/cozystack/cozystack-packages`;
    const manifestResponse = await fetch(`${base}/manifests/v0.1.0`, { headers: { accept: OCI_MANIFEST_MEDIA_TYPE } });
    expect(manifestResponse.status).toBe(200);
    const manifestBytes = await manifestResponse.arrayBuffer();
    expect(sha(manifestBytes)).toBe(digest);
    const manifest = JSON.parse(Buffer.from(manifestBytes).toString('utf8'));
    for (const descriptor of [manifest.config, ...manifest.layers]) {
      const blob = await (await fetch(`${base}/blobs/${descriptor.digest}`)).arrayBuffer();
      expect(sha(blob)).toBe(descriptor.digest);
    }
    // Pulling by digest gives the same manifest.
    expect((await fetch(`${base}/manifests/${digest}`, { headers: { accept: OCI_MANIFEST_MEDIA_TYPE } })).status).toBe(200);
  });

  scenario('pushes again idempotently (blobs already there) under another tag', () => {
    const result = push(registry, '--tag', 'latest-check');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(artifactDigest(synthesize()));
  });

  scenario('fails with one clear line when the registry is unreachable', async () => {
    const port = await freePort(); // nothing listens there
    const result = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(REPO_ROOT, 'synth', 'main.ts'), 'push', '--registry', `127.0.0.1:${port}`, '--plain-http', '--layout', join(synthesizedArtifact(), 'cozystack-packages')],
      { cwd: REPO_ROOT, encoding: 'utf8' },
    );
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^synth: push: HEAD http://127\\.0\\.0\\.1:${port}/v2/.*: ECONNREFUSED\n$`));
  });
});
