import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../../lib/version.js';
import { EXIT, InputError, reportError, ToolError } from '../../lib/cli.js';
import { REPO_ROOT } from '../support/synth.js';

function tool(script: string, ...args: string[]) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, script), ...args], { cwd: REPO_ROOT, encoding: 'utf8', input: '' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const TOOLS = [
  ['synth', 'synth/main.ts'],
  ['image-refs', 'hack/image-refs.ts'],
  ['select-install', 'hack/select-install.ts'],
  ['build', 'hack/build.ts'],
  ['conformance', 'hack/conformance.ts'],
  ['images', 'hack/images.ts'],
  ['bench', 'hack/bench.ts'],
  ['bench:e2e', 'hack/bench-e2e.ts'],
  ['bench:node', 'hack/bench-node.ts'],
] as const;

describe('every tool shares one command-line layer', () => {
  it.each(TOOLS)('%s: --help and -h print usage and exit 0; --version prints the version', (name, script) => {
    for (const flag of ['--help', '-h']) {
      const help = tool(script, flag);
      expect(help.status).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^${name} `));
      expect(help.stdout).toContain('--version');
    }
    const version = tool(script, '--version');
    expect(version.status).toBe(0);
    expect(version.stdout).toBe(`${VERSION}\n`);
  });

  it.each(TOOLS)('%s: an unknown flag is one line and exit 2', (name, script) => {
    const result = tool(script, ...(name === 'conformance' ? ['--cozystack', 'x'] : []), '--bogus');
    expect(result.status).toBe(EXIT.BAD_INPUT);
    expect(result.stderr).toBe(`${name}: Unknown argument: bogus (see ${name} --help)\n`);
  });

  it('image-refs: a missing root is bad input (2), a refused ref a failed check (1), and --release refuses the all-zero digest', () => {
    expect(tool('hack/image-refs.ts', '/nonexistent')).toMatchObject({ status: 2, stderr: 'image-refs: /nonexistent: no such directory\n' });
    expect(tool('hack/image-refs.ts', 'dist/packages').status).toBe(0);
    // dist/ carries the stamped digests of the images this commit builds: a release passes.
    expect(tool('hack/image-refs.ts', '--release', 'dist/packages')).toMatchObject({ status: 0, stderr: '' });
    const zeroed = join(mkdtempSync(join(tmpdir(), 'image-refs-')), 'packages');
    cpSync(join(REPO_ROOT, 'dist', 'packages'), zeroed, { recursive: true });
    const values = join(zeroed, 'system', 'address-controller', 'values.yaml');
    writeFileSync(values, readFileSync(values, 'utf8').replace(/@sha256:[0-9a-f]{64}/g, `@sha256:${'0'.repeat(64)}`));
    const release = tool('hack/image-refs.ts', '--release', zeroed);
    expect(release.status).toBe(EXIT.CHECK_FAILED);
    expect(release.stderr).toMatch(/^image-refs: system\/address-controller\/values\.yaml: first-party image ghcr\.io\/cozystack\/address-controller:\S+@sha256:0{64} carries the all-zero placeholder digest; stamp the digest its build gives \(npm run images -- --stamp && npm run synth\)/);
    expect(tool('hack/image-refs.ts', '--release=maybe').status).toBe(2);
  });

  it('select-install: -h is help, not a suite; an empty selection is refused; an unknown suite is bad input', () => {
    expect(tool('hack/select-install.ts', '-h').stdout).toMatch(/^select-install /);
    expect(tool('hack/select-install.ts', '--values')).toMatchObject({ status: 2, stdout: '' });
    expect(tool('hack/select-install.ts', '--values').stderr).toMatch(/^select-install: no suite given/);
    expect(tool('hack/select-install.ts', 'nope')).toMatchObject({ status: 2, stderr: 'select-install: suite "nope" maps to no PackageSource\n' });
    expect(tool('hack/select-install.ts', '--disabled', '--validate').status).toBe(2);
  });

  it('build: an unknown controller is refused before anything is built', () => {
    expect(tool('hack/build.ts', 'adress-controller')).toMatchObject({
      status: 2,
      stderr: 'build: unknown controller "adress-controller" (known: address-controller, metallb-iad)\n',
    });
  });

  it('images: an unknown controller, and auth flags without --push, are refused before anything is built', () => {
    expect(tool('hack/images.ts', 'adress-controller')).toMatchObject({ status: 2, stderr: 'images: unknown controller "adress-controller" (known: address-controller, metallb-iad)\n' });
    expect(tool('hack/images.ts', '--plain-http')).toMatchObject({ status: 2, stderr: 'images: --plain-http, --username and --password-stdin go with --push\n' });
    expect(tool('hack/images.ts', '--check', '--stamp')).toMatchObject({ status: 2, stderr: 'images: --check writes nothing: it goes without --push and --stamp\n' });
    expect(tool('hack/images.ts', '--check=maybe').status).toBe(2);
  });

  it('bench:e2e: without the control-plane binaries, or with a bad claim count, one line and exit 2 before anything runs', () => {
    const env = { ...process.env, E2E_BIN: '/nonexistent', KUBEBUILDER_ASSETS: '' };
    const missing = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'hack', 'bench-e2e.ts')], { cwd: REPO_ROOT, encoding: 'utf8', env });
    expect(missing.status).toBe(EXIT.BAD_INPUT);
    expect(missing.stderr).toBe(
      'bench:e2e: the control-plane binaries are not built (etcd not found (looked in /nonexistent/etcd)): ' +
        'run bash hack/e2e/build-binaries.sh first (about 7.5 min the first time, cached after), or set $E2E_BIN\n',
    );
    const claims = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'hack', 'bench-e2e.ts')], { cwd: REPO_ROOT, encoding: 'utf8', env: { ...env, BENCH_E2E_CLAIMS: '1e3' } });
    expect(claims).toMatchObject({ status: 2, stderr: 'bench:e2e: BENCH_E2E_CLAIMS="1e3": expected a positive integer (default 1000)\n' });
  });

  it('bench:node: a bad size is one line and exit 2 before anything runs', () => {
    const run = (env: Record<string, string>) =>
      spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'hack', 'bench-node.ts')], { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, ...env } });
    expect(run({ BENCH_NODE_CLAIMS: '10k' })).toMatchObject({ status: 2, stderr: 'bench:node: BENCH_NODE_CLAIMS="10k": expected a positive integer (default 10000)\n' });
    expect(run({ BENCH_NODE_SERVICES: '0' })).toMatchObject({ status: 2, stderr: 'bench:node: BENCH_NODE_SERVICES="0": expected a positive integer (default 20000)\n' });
  });

  it('conformance: a missing --cozystack or a folder that is not a checkout is bad input', () => {
    expect(tool('hack/conformance.ts').stderr).toBe('conformance: Missing required argument: cozystack (see conformance --help)\n');
    expect(tool('hack/conformance.ts', '--cozystack', '/tmp')).toMatchObject({ status: 2 });
  });
});

describe('reportError', () => {
  const report = (error: unknown) => {
    const lines: string[] = [];
    return { code: reportError('t', error, (l) => lines.push(l)), lines };
  };
  it('maps the error kinds to the exit codes, with a stack only for a bug', () => {
    expect(report(new ToolError(['a', 'b']))).toEqual({ code: 1, lines: ['t: a\n', 't: b\n'] });
    expect(report(new InputError('bad'))).toEqual({ code: 2, lines: ['t: bad\n'] });
    const enoent = Object.assign(new Error("ENOTDIR: not a directory, open 'x/y'"), { code: 'ENOTDIR' });
    expect(report(enoent)).toEqual({ code: 2, lines: ["t: ENOTDIR: not a directory, open 'x/y'\n"] });
    const bug = report(new TypeError('x is undefined'));
    expect(bug.code).toBe(3);
    expect(bug.lines[0]).toMatch(/^t: internal error: TypeError: x is undefined\n\s+at /);
  });
});
