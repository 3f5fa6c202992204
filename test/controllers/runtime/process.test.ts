import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkNamespaceFlag, loadKubeConfig } from '../../../controllers/runtime/process.js';

describe('startup', () => {
  it('fails fast with one line when no kubeconfig can be found, instead of retrying localhost:8080 forever', () => {
    const env = { ...process.env, KUBECONFIG: '', HOME: mkdtempSync(join(tmpdir(), 'home-')), KUBERNETES_SERVICE_HOST: '' };
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      expect(() => loadKubeConfig(undefined, env)).toThrow(
        'unable to get kubeconfig: pass --kubeconfig, set $KUBECONFIG, provide ~/.kube/config, or run in a Pod with a ServiceAccount',
      );
    } finally {
      process.env = saved;
    }
  });

  it('names the file when --kubeconfig is missing or has no cluster', () => {
    expect(() => loadKubeConfig('/nonexistent/kubeconfig')).toThrow(/^unable to get kubeconfig: \/nonexistent\/kubeconfig: ENOENT/);
    const empty = join(mkdtempSync(join(tmpdir(), 'kc-')), 'config');
    writeFileSync(empty, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    expect(() => loadKubeConfig(empty)).toThrow(`unable to get kubeconfig: ${empty}: no current context with a cluster server`);
  });

  it('loads a kubeconfig that names a cluster', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'kc-')), 'config');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ].join('\n'),
    );
    expect(loadKubeConfig(file).getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
  });

  it.each(['Bad_NS', '', '-x', 'a'.repeat(64), 'a.b'])('refuses the namespace flag value %j', (value) => {
    expect(() => checkNamespaceFlag('metallb-namespace', value)).toThrow(`--metallb-namespace ${JSON.stringify(value)}: not a namespace name`);
  });

  it.each(['cozy-metallb', 'metallb-system', 'a'])('accepts %j', (value) => {
    expect(() => checkNamespaceFlag('metallb-namespace', value)).not.toThrow();
  });
});
