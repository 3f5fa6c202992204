import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactDigest, synthesize } from '../../synth/artifact.js';
import { OCI_MANIFEST_MEDIA_TYPE } from '../../lib/oci/layout.js';
import { REPO_ROOT, synthesizedArtifact } from '../support/synth.js';
import { freePort } from './support/ports.js';
import { startRegistry, type Registry } from './support/registry.js';
import { startTokenService, type TokenService } from './support/token-service.js';
import { scenarioTest } from './support/summary.js';

const scenario = scenarioTest(it);

const sha = (bytes: ArrayBuffer) => `sha256:${createHash('sha256').update(Buffer.from(bytes)).digest('hex')}`;

function push(registry: Registry, ...extra: string[]) {
  return pushWith({}, registry, ...extra);
}

/** synth push as a child process; async, so this process keeps draining the registry's output pipes meanwhile. */
function pushWith(
  { env = {}, input = '' }: { env?: Record<string, string>; input?: string },
  registry: Registry,
  ...extra: string[]
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const args = ['--import', 'tsx', join(REPO_ROOT, 'synth', 'main.ts'), 'push', '--registry', registry.address, '--plain-http', '--layout', join(synthesizedArtifact(), 'cozystack-packages'), ...extra];
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: { ...process.env, DOCKER_CONFIG: emptyDockerConfig, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end(input);
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

/** A DOCKER_CONFIG with no credentials, so the machine's own ~/.docker never leaks in. */
const emptyDockerConfig = mkdtempSync(join(tmpdir(), 'docker-config-none-'));

/** A DOCKER_CONFIG folder whose config.json holds `auths[registry]` for user:password. */
function dockerConfig(registry: string, user: string, password: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'docker-config-'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ auths: { [registry]: { auth: Buffer.from(`${user}:${password}`).toString('base64') } } }));
  return dir;
}

const USER = 'pusher';
const PASSWORD = 'correct horse battery staple';
const REPOSITORY = 'cozystack/cozystack/cozystack-packages';

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
    const result = await push(registry, '--tag', 'v0.1.0');
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

  scenario('pushes again idempotently (blobs already there) under another tag', async () => {
    const result = await push(registry, '--tag', 'latest-check');
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

describe('synth push authenticates as registry clients do', () => {
  describe('htpasswd (Basic)', () => {
    let registry: Registry;
    beforeAll(async () => {
      registry = await startRegistry({ htpasswd: `${USER}:${bcrypt.hashSync(PASSWORD, 10)}\n` });
    });
    afterAll(async () => {
      await registry?.stop();
    });

    scenario('without credentials: one line saying what to pass, exit 2', async () => {
      const result = await push(registry);
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(/^synth: push: HEAD .*: the registry wants a user and password \(Basic\) and there are none: pass --username U --password-stdin, or docker login\n$/);
    });

    scenario('with --username and --password-stdin', async () => {
      const result = await pushWith({ input: `${PASSWORD}\n` }, registry, '--username', USER, '--password-stdin');
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      expect(result.stdout).toContain('(read back and verified)');
    });

    scenario("with the docker config's auths entry ($DOCKER_CONFIG/config.json)", async () => {
      const result = await pushWith({ env: { DOCKER_CONFIG: dockerConfig(registry.address, USER, PASSWORD) } }, registry, '--tag', 'from-docker-config');
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
    });

    scenario('a wrong password is refused in one line naming where it came from', async () => {
      const result = await pushWith({ env: { DOCKER_CONFIG: dockerConfig(registry.address, USER, 'wrong') } }, registry);
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(/^synth: push: HEAD .*: HTTP 401 again after authenticating: the registry refused the credentials from .*config\.json auths\["127\.0\.0\.1:\d+"\]\n$/);
    });

    scenario('--username without --password-stdin is refused before any request', async () => {
      const result = await push(registry, '--username', USER);
      expect(result).toMatchObject({ status: 2, stderr: 'synth: push: --username needs --password-stdin (a password on the command line would land in shell history)\n' });
    });
  });

  describe('bearer tokens (the distribution token spec)', () => {
    let tokens: TokenService;
    let registry: Registry;
    beforeAll(async () => {
      tokens = await startTokenService({ [USER]: PASSWORD });
      registry = await startRegistry({ token: tokens });
    });
    afterAll(async () => {
      await registry?.stop();
      await tokens?.stop();
    });

    scenario('answers the Bearer challenge with a token for pull,push on the repository, and pushes', async () => {
      const result = await pushWith({ input: PASSWORD }, registry, '--username', USER, '--password-stdin');
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      const asked = tokens.requests.filter((r) => r.authenticated);
      expect(asked.length).toBeGreaterThan(0);
      expect(asked[0]).toMatchObject({ account: USER, service: tokens.service });
      expect(asked[0]!.scopes).toContain(`repository:${REPOSITORY}:pull,push`);
      // The registry really checks the token: without one it still refuses.
      expect((await fetch(`http://${registry.address}/v2/${REPOSITORY}/tags/list`)).status).toBe(401);
    });

    scenario('anonymously: the token service refuses, said in one line', async () => {
      const result = await push(registry);
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(/^synth: push: HEAD .*: token service http:\/\/127\.0\.0\.1:\d+\/token refused repository:cozystack\/cozystack\/cozystack-packages:pull,push anonymously \(no credentials: pass --username U --password-stdin, or docker login\): HTTP 401\n$/);
    });
  });
});
