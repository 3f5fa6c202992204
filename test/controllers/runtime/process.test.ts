import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server } from 'node:net';
import { checkNamespaceFlag, loadKubeConfig } from '../../../controllers/runtime/process.js';
import { apiError } from '../../../controllers/runtime/kube.js';
import { VERSION } from '../../../lib/version.js';

function kubeconfigFor(server: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'kc-')), 'config');
  writeFileSync(
    file,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]\n` +
      'users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
  );
  return file;
}

/** Starts the core against `server`, lets it run `runMs`, sends SIGTERM and times the exit. */
async function runThenTerminate(server: string, runMs: number) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'controllers/address-controller/main.ts', `--kubeconfig=${kubeconfigFor(server)}`, '--health-probe-bind-address=0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // The run starts once the process has said it started (tsx's own start takes seconds on a loaded machine).
  const deadline = Date.now() + 30_000;
  while (!stderr.includes('"msg":"starting"') && child.exitCode === null && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise((r) => setTimeout(r, runMs));
  const signalled = Date.now();
  child.kill('SIGTERM');
  const code = await exited;
  return { code, stopMs: Date.now() - signalled, lines: stderr.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const listening = (server: Server | ReturnType<typeof createHttpServer>) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

describe('stopping and saying why', () => {
  it('says what it is at startup: version, flags and identity', async () => {
    const { lines } = await runThenTerminate('https://127.0.0.1:1', 3_000);
    expect(lines[0]).toMatchObject({ level: 'info', msg: 'starting', version: VERSION, server: 'https://127.0.0.1:1', user: 'u' });
    expect(lines[0]!.flags).toMatchObject({ 'leader-elect': false, concurrency: 8, 'health-probe-bind-address': '0' });
    // Unique per process (a container's pid is 1 after every restart).
    expect(String(lines[0]!.identity)).toMatch(/_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  }, 30_000);

  it('exits within 2 s of SIGTERM while the apiserver is down (in retry backoff)', async () => {
    const { code, stopMs, lines } = await runThenTerminate('https://127.0.0.1:1', 5_000);
    expect(code).toBe(0);
    expect(stopMs).toBeLessThan(2_000);
    expect(lines.find((l) => l.msg === 'list failed; retrying')?.error).toMatchObject({ reason: 'ECONNREFUSED' });
  }, 30_000);

  it('exits within 2 s of SIGTERM while a request hangs (an apiserver that accepts and never answers)', async () => {
    const sockets: import('node:net').Socket[] = [];
    const blackHole = createTcpServer((socket) => sockets.push(socket));
    const port = await listening(blackHole);
    try {
      const { code, stopMs } = await runThenTerminate(`https://127.0.0.1:${port}`, 3_000);
      expect(code).toBe(0);
      expect(stopMs).toBeLessThan(2_000);
    } finally {
      sockets.forEach((s) => s.destroy());
      blackHole.close();
    }
  }, 30_000);

  it('logs an RBAC refusal as {code, reason, message}, and a failed list as a list failure', async () => {
    const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: 'ipaddressclaims.local.sdn.cozystack.io is forbidden: User "u" cannot list resource' };
    const forbidding = createHttpServer((_req, res) => res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify(status)));
    const port = await listening(forbidding);
    try {
      const { lines } = await runThenTerminate(`http://127.0.0.1:${port}`, 3_000);
      const failure = lines.find((l) => l.msg === 'list failed; retrying');
      expect(failure?.error).toEqual({ code: 403, reason: 'Forbidden', message: status.message });
    } finally {
      forbidding.close();
    }
  }, 30_000);

  it('apiError: Status bodies, bodies that are not JSON, transport errors', () => {
    expect(apiError({ code: 404, body: '{"reason":"NotFound","message":"x not found"}' })).toEqual({ code: 404, reason: 'NotFound', message: 'x not found' });
    expect(apiError({ code: 502, body: 'Bad Gateway' })).toEqual({ code: 502, reason: undefined, message: 'Bad Gateway' });
    expect(apiError(Object.assign(new Error('fetch failed'), { cause: { code: 'ECONNREFUSED' } }))).toEqual({ reason: 'ECONNREFUSED', message: 'fetch failed' });
  });
});

describe('startup', () => {
  it('keeps running while the apiserver is unreachable with probes and metrics off, and exits 0 on SIGTERM', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'kc-')), 'config');
    writeFileSync(
      file,
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]\n' +
        'users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
    );
    const child = spawn(process.execPath, ['--import', 'tsx', 'controllers/address-controller/main.ts', `--kubeconfig=${file}`, '--health-probe-bind-address=0'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // Its signal handlers are set up in the same synchronous run that logs "starting" (nothing is
    // awaited between): a SIGTERM before that line, on a loaded machine where tsx takes seconds to
    // load the controller, would kill it outright (exit code null), as one run here did.
    let stderr = '';
    const started = new Promise<void>((resolve) => child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()).includes('"msg":"starting"') && resolve()));
    await Promise.race([started, exited]);
    const early = await Promise.race([exited.then(() => 'exited'), new Promise((r) => setTimeout(() => r('running'), 4_000))]);
    child.kill('SIGTERM');
    expect(early).toBe('running');
    expect(await exited).toBe(0);
  }, 20_000);

  it('refuses a --concurrency outside 1..64 with the reason in one line, exit 2', () => {
    for (const value of ['0', '65', '1.5']) {
      const result = spawnSync(process.execPath, ['--import', 'tsx', 'controllers/address-controller/main.ts', `--concurrency=${value}`], { encoding: 'utf8' });
      expect(result.status).toBe(2);
      expect(result.stderr).toBe(`address-controller: --concurrency ${value}: a whole number from 1 to 64 (see address-controller --help)\n`);
    }
  }, 30_000);

  it.each([
    [['--version'], 0, ''],
    [['--leader-elect=yes'], 2, 'metallb-iad: --leader-elect=yes: --leader-elect is a switch; give it alone, or =true / =false (see metallb-iad --help)\n'],
    [['--metallb-namespace', 'Bad_NS'], 2, `metallb-iad: --metallb-namespace "Bad_NS": not a namespace name (lowercase letters, digits and '-', at most 63) (see metallb-iad --help)\n`],
    [['--placeholder-namespace'], 2, 'metallb-iad: Not enough arguments following: placeholder-namespace (see metallb-iad --help)\n'],
    [['--bogus'], 2, 'metallb-iad: Unknown argument: bogus (see metallb-iad --help)\n'],
  ])('metallb-iad %j: exit %i', (args, status, stderr) => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'controllers/metallb-iad/main.ts', ...args], { encoding: 'utf8' });
    expect(result.status).toBe(status);
    expect(result.stderr).toBe(stderr);
    if (status === 0) {
      expect(result.stdout).toBe(`${VERSION}\n`);
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
