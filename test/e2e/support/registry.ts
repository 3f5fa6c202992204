/** Debian's docker-registry (the CNCF distribution registry) on a loopback port. */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitFor } from './ports.js';
import { start, type Started } from './processes.js';

export interface Registry {
  readonly address: string;
  stop(): Promise<void>;
}

const BINARY = process.env.DOCKER_REGISTRY ?? '/usr/bin/docker-registry';

/** How clients must authenticate: none, htpasswd (Basic), or bearer tokens from a token service. */
export type RegistryAuthConfig =
  | { readonly htpasswd: string }
  | { readonly token: { readonly realm: string; readonly service: string; readonly issuer: string; readonly rootCertBundle: string } };

function authYaml(auth: RegistryAuthConfig | undefined, dir: string): string {
  if (!auth) {
    return '';
  }
  if ('htpasswd' in auth) {
    writeFileSync(join(dir, 'htpasswd'), auth.htpasswd);
    return `auth:\n  htpasswd: {realm: e2e-registry, path: ${join(dir, 'htpasswd')}}\n`;
  }
  const { realm, service, issuer, rootCertBundle } = auth.token;
  return `auth:\n  token: {realm: "${realm}", service: ${service}, issuer: ${issuer}, rootcertbundle: ${rootCertBundle}}\n`;
}

export async function startRegistry(auth?: RegistryAuthConfig): Promise<Registry> {
  if (!existsSync(BINARY)) {
    throw new Error(`${BINARY} not found: apt-get install docker-registry (.ci/run does)`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'e2e-registry-'));
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  writeFileSync(
    join(dir, 'config.yml'),
    `version: 0.1\n# Quiet: the tests push with spawnSync, which stops this process's pipe from being drained.\nlog: {level: error, accesslog: {disabled: true}}\nstorage:\n  filesystem: {rootdirectory: ${join(dir, 'data')}}\nhttp:\n  addr: ${address}\n${authYaml(auth, dir)}`,
  );
  const registry: Started = start('registry', BINARY, ['serve', join(dir, 'config.yml')], dir);
  await waitFor(`registry on ${address} (${registry.tail(5)})`, async () => [200, 401].includes((await fetch(`http://${address}/v2/`)).status));
  return {
    address,
    async stop() {
      await registry.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
