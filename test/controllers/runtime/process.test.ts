import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkNamespaceFlag, loadKubeConfig } from '../../../controllers/runtime/process.js';

describe('startup', () => {
  it('keeps running while the apiserver is unreachable with probes and metrics off, and exits 0 on SIGTERM', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'kc-')), 'config');
    writeFileSync(
      file,
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]\n' +
        'users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
    );
    const child = spawn(process.execPath, ['--import', 'tsx', 'controllers/address-controller/main.ts', `--kubeconfig=${file}`, '--health-probe-bind-address=0'], {
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const early = await Promise.race([exited.then(() => 'exited'), new Promise((r) => setTimeout(() => r('running'), 4_000))]);
    child.kill('SIGTERM');
    expect(early).toBe('running');
    expect(await exited).toBe(0);
  }, 20_000);

  it('refuses a --concurrency outside 1..64 with the reason, exit 1', () => {
    for (const value of ['0', '65', '1.5']) {
      const result = spawnSync(process.execPath, ['--import', 'tsx', 'controllers/address-controller/main.ts', `--concurrency=${value}`], { encoding: 'utf8' });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`--concurrency ${value}: a whole number from 1 to 64`);
    }
  }, 30_000);

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
