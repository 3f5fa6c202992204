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

export async function startRegistry(): Promise<Registry> {
  if (!existsSync(BINARY)) {
    throw new Error(`${BINARY} not found: apt-get install docker-registry (.ci/run does)`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'e2e-registry-'));
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  writeFileSync(
    join(dir, 'config.yml'),
    `version: 0.1\nlog: {level: info}\nstorage:\n  filesystem: {rootdirectory: ${join(dir, 'data')}}\nhttp:\n  addr: ${address}\n`,
  );
  const registry: Started = start('registry', BINARY, ['serve', join(dir, 'config.yml')], dir);
  await waitFor(`registry on ${address} (${registry.tail(5)})`, async () => (await fetch(`http://${address}/v2/`)).status === 200);
  return {
    address,
    async stop() {
      await registry.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
