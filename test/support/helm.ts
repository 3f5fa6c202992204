/** Runs the real helm CLI on synthesized charts. */
import { spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { resolveHelm } from '../../hack/helm.js';

export interface HelmResult {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function helm(...args: string[]): HelmResult {
  const result = spawnSync(resolveHelm(), args, { encoding: 'utf8', env: { ...process.env, HELM_CACHE_HOME: '/tmp/cozy-addresses-helm-cache' } });
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
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
