/**
 * The deputies' own tools, the real CLIs: helm (hack/helm.ts resolves it) and kubectl
 * (/usr/bin/kubectl, or $KUBECTL). Run without blocking the test's event loop, so the
 * Service watchers keep polling while a tool runs.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveHelm } from '../../../../hack/helm.js';

/** The suite's chart: one LoadBalancer Service naming a claim (values: name, claim, revision). */
export const CHART = join(dirname(fileURLToPath(import.meta.url)), 'chart');

export const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';

/** helm's and kubectl's caches and config, away from the user's. */
const home = mkdtempSync(join(tmpdir(), 'e2e-deputies-tools-'));
/** Removes the tools' caches (also done at exit). */
export function removeToolState(): void {
  rmSync(home, { recursive: true, force: true });
}
process.once('exit', removeToolState);
const toolEnv = {
  ...process.env,
  HELM_CACHE_HOME: join(home, 'helm-cache'),
  HELM_CONFIG_HOME: join(home, 'helm-config'),
  HELM_DATA_HOME: join(home, 'helm-data'),
  KUBECACHEDIR: join(home, 'kube-cache'),
};

export interface Ran {
  readonly stdout: string;
  readonly ms: number;
}

/** Runs `command`; throws with its output when it fails. */
export function run(command: string, args: readonly string[], input?: string): Promise<Ran> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = execFile(command, [...args], { env: toolEnv, maxBuffer: 16 << 20, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`${command} ${args.join(' ')} failed: ${error.message}\n${stderr}`));
      } else {
        resolve({ stdout, ms: Date.now() - started });
      }
    });
    if (input !== undefined) {
      child.stdin!.end(input);
    }
  });
}

let helmBinary: string | undefined;
/** The real helm CLI. */
export function helm(...args: string[]): Promise<Ran> {
  helmBinary ??= process.env.HELM ?? resolveHelm();
  return run(helmBinary, args);
}

/** The real kubectl, as the user of `kubeconfig`; `input` is its stdin (a manifest for `-f -`). */
export function kubectl(kubeconfig: string, args: readonly string[], input?: string): Promise<Ran> {
  return run(KUBECTL, ['--kubeconfig', kubeconfig, '--cache-dir', join(home, 'kube-cache'), ...args], input);
}
