import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
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

describe('npm run synth (node on the prebuilt bundle, synth/bin.mjs)', () => {
  it('writes the same bytes as synth/main.ts from source, and answers --version', () => {
    const dir = join(tmp(), 'dist');
    const result = spawnSync(process.execPath, [join(REPO_ROOT, 'synth', 'bin.mjs'), '--quiet', '--out', dir], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    expect(readTree(dir)).toEqual(readTree(join(REPO_ROOT, 'dist')));
    const version = spawnSync(process.execPath, [join(REPO_ROOT, 'synth', 'bin.mjs'), '--version'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(version.stdout).toBe(`${JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version}\n`);
  }, 60_000);
});

describe('cdk8s synth (cdk8s-cli, a devDependency)', () => {
  it('runs the app of cdk8s.yaml and writes what npm run synth writes', () => {
    const dir = join(tmp(), 'dist');
    const result = spawnSync(join(REPO_ROOT, 'node_modules', '.bin', 'cdk8s'), ['synth', '--output', dir], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    expect(readTree(dir)).toEqual(readTree(join(REPO_ROOT, 'dist')));
  }, 60_000);
});

describe("--set in helm's grammar", () => {
  it('takes escaped dots, indexes, several assignments in one flag, and --set-string', () => {
    const dir = join(tmp(), 'dist');
    const result = synth(
      '--out', dir, '--quiet',
      '--set', 'address-controller.controller.podAnnotations.example\\.com/team=net,address-controller.imagePullSecrets[0].name=regcred',
      '--set-string', 'address-controller.controller.podAnnotations.example\\.com/rev=7',
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const values = readFileSync(join(dir, 'charts', 'address-controller', 'values.yaml'), 'utf8');
    expect(values).toContain('example.com/team: net');
    expect(values).toContain('example.com/rev: "7"');
    expect(values).toMatch(/imagePullSecrets:\n\s+- name: regcred/);
  });
});

describe('the written tree', () => {
  it("is staged under names .gitignore ignores (what a killed run leaves is never committed)", () => {
    const ignored = spawnSync('git', ['check-ignore', '--no-index', '.dist.tmp-a1b2c3', '.dist.tmp-a1b2c3.old'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(ignored.stdout.trim().split('\n')).toEqual(['.dist.tmp-a1b2c3', '.dist.tmp-a1b2c3.old']);
    expect(readFileSync(join(REPO_ROOT, 'synth', 'output.ts'), 'utf8')).toContain('`.${basename(target)}.tmp-`');
  });

  it('is 0755 folders and 0644 files whatever the umask', () => {
    const dir = join(tmp(), 'dist');
    const result = spawnSync('sh', ['-c', `umask 077 && exec "$0" --import tsx synth/main.ts --quiet --out "$1"`, process.execPath, dir], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(result.status).toBe(0);
    const modes = new Set<string>();
    const walk = (path: string) => {
      const stat = statSync(path);
      modes.add(`${stat.isDirectory() ? 'd' : 'f'}${(stat.mode & 0o777).toString(8)}`);
      if (stat.isDirectory()) {
        readdirSync(path).forEach((name) => walk(join(path, name)));
      }
    };
    walk(dir);
    expect([...modes].sort()).toEqual(['d755', 'f644']);
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
    ['an unknown flag', ['--bogus'], /^synth: Unknown argument: bogus \(see synth --help\)\n$/],
    ['--values with no file', ['--values'], /^synth: Not enough arguments following: values \(see synth --help\)\n$/],
    ['--set with no value', ['--set'], /^synth: Not enough arguments following: set \(see synth --help\)\n$/],
    ['--check with a junk value', ['--check=maybe'], /^synth: --check=maybe: --check is a switch; give it alone, or =true \/ =false\n$/],
    ['a stray argument', ['charts'], /^synth: unexpected argument "charts" \(see synth --help\)\n$/],
    ['an unterminated --set list', ['--set', 'address-controller.controller.tolerations={a'], /^synth: --set .*: key "address-controller\.controller\.tolerations": list not closed with "}"\n$/],
    ['a --set index that is not a number', ['--set', 'address-controller.imagePullSecrets[x].name=a'], /index "x" is not a list index/],
    [
      'a --set-string where a number is needed',
      ['--set-string', 'address-controller.controller.replicas=2'],
      /^synth: --set-string address-controller\.controller\.replicas=2: address-controller\.controller\.replicas: must be integer \(got "2"\)\n$/,
    ],
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
    [
      'a fence allowlist ServiceAccount without namespace',
      ['--set', 'cozy-metallb-iad.admissionPolicy.trustedCallers.serviceAccounts[0].name=argocd-application-controller'],
      /^synth: --set .*: cozy-metallb-iad\.admissionPolicy\.trustedCallers\.serviceAccounts\.0\.namespace: is required/,
    ],
    [
      'an empty fence allowlist group',
      ['--set-string', 'cozy-metallb-iad.admissionPolicy.trustedCallers.groups[0]='],
      /^synth: --set-string .*: cozy-metallb-iad\.admissionPolicy\.trustedCallers\.groups\.0: must NOT have fewer than 1 characters/,
    ],
    ['a malformed --set', ['--set', 'replicas'], /^synth: --set replicas: key "replicas" has no value \(expected key=value\)\n$/],
    ['a --set without a chart', ['--set', 'replicas=2'], /^synth: --set replicas=2: key "replicas": expected <chart>\.<path>=<value>\n$/],
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

  it('--check against an --out that is a file', () => {
    const file = join(tmp(), 'a-file');
    writeFileSync(file, '');
    const result = synth('--check', '--out', file);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(`synth: --out ${file}: exists and is not a directory\n`);
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
