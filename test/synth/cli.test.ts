import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { FileTree } from '../../synth/file-tree.js';
import { readTree } from '../../synth/output.js';
import { REPO_ROOT } from '../support/synth.js';

function synth(...args: string[]) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'synth', 'main.ts'), ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { ...process.env, CDK8S_OUTDIR: '' },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const tmp = () => mkdtempSync(join(tmpdir(), 'cozy-addresses-cli-'));

describe('npm run synth', () => {
  let out: string;
  beforeAll(() => {
    out = join(tmp(), 'dist');
    const result = synth('--out', out);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('writes what the committed dist/ holds, and says what and how long', () => {
    expect(readTree(out)).toEqual(readTree(join(REPO_ROOT, 'dist')));
    const again = synth('--out', out);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain(`${out}/charts/address-controller/Chart.yaml (`);
    expect(again.stdout).toMatch(/synth: wrote \d+ files to .* \(cozystack-packages sha256:[0-9a-f]{64}\) in \d+ ms\n$/);
  });

  it('rewrites byte-identically on a second run', () => {
    const before = readTree(out);
    expect(synth('--out', out, '--quiet').status).toBe(0);
    expect(readTree(out)).toEqual(before);
  });

  it('--check passes on an up-to-date tree and fails with a unified diff after a hand edit', () => {
    const copy = join(tmp(), 'dist');
    cpSync(out, copy, { recursive: true });
    const clean = synth('--check', '--out', copy);
    expect(clean.status).toBe(0);
    expect(clean.stdout).toMatch(/is up to date/);

    const values = join(copy, 'charts', 'metallb-iad', 'values.yaml');
    writeFileSync(values, readFileSync(values, 'utf8').replace('replicas: 1', 'replicas: 7'));
    writeFileSync(join(copy, 'stray.yaml'), 'x: 1\n');
    const drift = synth('--check', '--out', copy);
    expect(drift.status).toBe(1);
    expect(drift.stdout).toContain(`--- a/${copy}/charts/metallb-iad/values.yaml`);
    expect(drift.stdout).toContain(`+++ b/${copy}/charts/metallb-iad/values.yaml`);
    expect(drift.stdout).toContain('-  replicas: 7\n+  replicas: 1');
    expect(drift.stdout).toContain(`--- a/${copy}/stray.yaml\n+++ /dev/null`);
    expect(drift.stderr).toMatch(/differs from what synth writes/);
    // --check never writes.
    expect(readFileSync(values, 'utf8')).toContain('replicas: 7');
  });

  it('applies --set and --values overrides', () => {
    const dir = join(tmp(), 'dist');
    const file = join(tmp(), 'overrides.yaml');
    writeFileSync(file, 'metallb-iad:\n  metallbNamespace: cozy-metallb\n');
    const result = synth('--out', dir, '--values', file, '--set', 'address-controller.controller.replicas=2');
    expect(result.stderr).toBe('');
    expect(readFileSync(join(dir, 'charts', 'metallb-iad', 'values.yaml'), 'utf8')).toContain('metallbNamespace: cozy-metallb');
    expect(readFileSync(join(dir, 'charts', 'address-controller', 'values.yaml'), 'utf8')).toContain('replicas: 2');
  });
});

describe('bad input: one line on stderr, non-zero exit, the output untouched', () => {
  let out: string;
  let before: FileTree;
  beforeAll(() => {
    out = join(tmp(), 'dist');
    expect(synth('--out', out, '--quiet').status).toBe(0);
    before = readTree(out);
  });

  const badRuns: [string, string[], RegExp][] = [
    ['an unknown flag', ['--bogus'], /^synth: Unknown argument: bogus\n$/],
    [
      'a --set of the wrong type',
      ['--set', 'metallb-iad.controller.replicas=abc'],
      /^synth: --set metallb-iad\.controller\.replicas=abc: metallb-iad\.controller\.replicas: must be integer \(got "abc"\)\n$/,
    ],
    [
      'a --set of an unknown field',
      ['--set', 'address-controller.controller.replica=2'],
      /^synth: --set .*: address-controller\.controller\.replica: unknown field/,
    ],
    ['a --set for an unknown chart', ['--set', 'metallb.x=1'], /^synth: --set metallb\.x=1: unknown chart "metallb" \(known: address-controller, metallb-iad, cozy-address-controller, cozy-metallb-iad\)\n$/],
    [
      'replicas > 1 without leader election',
      ['--set', 'metallb-iad.controller.replicas=2', '--set', 'metallb-iad.controller.leaderElect=false'],
      /^synth: --set metallb-iad\.controller\.leaderElect=false: metallb-iad\.controller\.replicas: must be <= 1 \(more than one replica needs leaderElect: true\)/,
    ],
    ['a malformed --set', ['--set', 'replicas'], /^synth: --set replicas: expected <chart>\.<path>=<value>\n$/],
    ['an image tag without digest', ['--set', 'address-controller.image.tag=v1.0.0'], /address-controller\.image\.tag: must match pattern/],
    ['a missing --values file', ['--values', '/nonexistent/v.yaml'], /^synth: --values \/nonexistent\/v\.yaml: cannot read: ENOENT\n$/],
  ];

  it.each(badRuns)('%s', (_name, args, message) => {
    const result = synth('--out', out, ...args);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stdout).toBe('');
    expect(readTree(out)).toEqual(before);
  });

  it('a --values file with a wrong type names the file and the field', () => {
    const file = join(tmp(), 'bad.yaml');
    writeFileSync(file, 'metallb-iad:\n  controller:\n    leaderElect: "yes please"\n');
    const result = synth('--out', out, '--values', file);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(`synth: ${file}: metallb-iad.controller.leaderElect: must be boolean\n`);
    expect(readTree(out)).toEqual(before);
  });

  it('an unwritable --out', () => {
    const file = join(tmp(), 'a-file');
    writeFileSync(file, '');
    const result = synth('--out', join(file, 'dist'));
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^synth: --out .*a-file\/dist: cannot write: EEXIST: file already exists, mkdir '.*a-file'\n$/);
  });

  it('an --out folder that synth did not write is never replaced', () => {
    const dir = tmp();
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'precious.ts'), 'keep me');
    const result = synth('--out', dir);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/holds no SHA256SUMS, so it is not a synth output; refusing to replace it/);
    expect(readFileSync(join(dir, 'src', 'precious.ts'), 'utf8')).toBe('keep me');
  });
});
