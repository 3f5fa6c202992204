/** Runs the real helm CLI on synthesized charts. */
import { execFile, spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { resolveHelm } from '../../hack/helm.js';

export interface HelmResult {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

const HELM_ENV = { ...process.env, HELM_CACHE_HOME: '/tmp/cozy-addresses-helm-cache' };

export function helm(...args: string[]): HelmResult {
  const result = spawnSync(resolveHelm(), args, { encoding: 'utf8', env: HELM_ENV });
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/**
 * helm without blocking the event loop: for a release whose hooks wait on something this
 * process serves meanwhile (the lab's relays, through which a node reaches the apiserver).
 */
export function helmAsync(...args: string[]): Promise<HelmResult> {
  return new Promise((resolve) => {
    execFile(resolveHelm(), args, { encoding: 'utf8', env: HELM_ENV, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const status = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ status, stdout, stderr });
    });
  });
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

/** `helm template` → the rendered objects; fails the test with helm's stderr on error. */
export function renderChart(chartDir: string, ...args: string[]): KubeObject[] {
  const result = helm('template', 'release', chartDir, '--include-crds', ...args);
  if (result.status !== 0) {
    throw new Error(`helm template failed: ${result.stderr}`);
  }
  return parseAllDocuments(result.stdout)
    .map((doc) => {
      if (doc.errors.length > 0) {
        throw new Error(`rendered YAML does not parse: ${doc.errors[0]!.message}`);
      }
      return doc.toJS() as KubeObject | null;
    })
    .filter((o): o is KubeObject => o !== null);
}
