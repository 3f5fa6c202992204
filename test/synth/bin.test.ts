/**
 * `npm run synth` runs synth/bin.mjs: synth/main.ts bundled into CommonJS,
 * compiled from a V8 code cache, with the modules only --help and push need
 * loaded on first use. Whatever it does to start fast, it writes the bytes
 * synth/main.ts writes from source.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readTree } from '../../synth/output.js';
import { REPO_ROOT } from '../support/synth.js';

const BIN = join(REPO_ROOT, 'synth', 'bin.mjs');
const tmp = () => mkdtempSync(join(tmpdir(), 'cozy-addresses-bin-'));

function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, args, { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, CDK8S_OUTDIR: '', ...env } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
const bundled = (...args: string[]) => run([BIN, ...args]);
const fromSource = (...args: string[]) => run(['--import', 'tsx', join(REPO_ROOT, 'synth', 'main.ts'), ...args]);

describe('synth/bin.mjs (the bundle npm run synth runs)', () => {
  let fromBundle: string;
  beforeAll(() => {
    fromBundle = join(tmp(), 'dist');
    const result = bundled('--quiet', '--out', fromBundle);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  }, 120_000);

  it('writes the bytes synth/main.ts writes from source', () => {
    const source = join(tmp(), 'dist');
    expect(fromSource('--quiet', '--out', source).status).toBe(0);
    expect(readTree(fromBundle)).toEqual(readTree(source));
  }, 60_000);

  it('prints the help synth/main.ts prints (string-width loaded on first use)', () => {
    const help = bundled('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toBe(fromSource('--help').stdout);
    expect(help.stdout).toMatch(/^synth \[--out DIR\]/);
  }, 60_000);

  it('into a folder that already holds its output, writes nothing and says so', () => {
    const chart = join(fromBundle, 'charts', 'address-controller', 'Chart.yaml');
    const before = statSync(chart).mtimeMs;
    const again = bundled('--quiet', '--out', fromBundle);
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(/^synth: wrote 0 files to .*: its \d+ files already hold this output \(cozystack-packages sha256:[0-9a-f]{64}\) in \d+ ms\n$/);
    expect(statSync(chart).mtimeMs).toBe(before);
  });

  it('runs credential helpers through child_process, loaded on first use', () => {
    const config = tmp();
    writeFileSync(join(config, 'config.json'), JSON.stringify({ credsStore: 'cozy-addresses-test-missing' }));
    const layout = join(fromBundle, 'cozystack-packages');
    const push = run([BIN, 'push', '--registry', '127.0.0.1:9', '--plain-http', '--layout', layout], { DOCKER_CONFIG: config });
    expect(push.stderr).toBe(
      `synth: push: ${join(config, 'config.json')} names credential helper cozy-addresses-test-missing, but docker-credential-cozy-addresses-test-missing cannot run: ENOENT\n`,
    );
    expect(push.status).toBe(2);
  });
});

describe('runBundle: the V8 code cache beside a bundle', () => {
  /** Runs a two-line bundle in a fresh node; returns what runBundle said of the cache, and the bundle's export. */
  function runOnce(bundle: string): { cache: string; answer: number } {
    const script = `import(${JSON.stringify(BIN)}).then((m) => { const r = m.runBundle(${JSON.stringify(bundle)}); console.log(JSON.stringify({ cache: r.cache, answer: r.exports.answer })); })`;
    const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    return JSON.parse(result.stdout) as { cache: string; answer: number };
  }

  it('is written when missing, then used; one V8 refuses is rewritten', () => {
    const dir = tmp();
    mkdirSync(dir, { recursive: true });
    const bundle = join(dir, 'synth-test.cjs');
    writeFileSync(bundle, '(function (exports, require, module, __filename, __dirname) {\nexports.answer = require("node:path").basename(__filename).length + 28;\n})');
    const cache = `${bundle}.v8-${process.versions.v8}.cache`;
    expect(runOnce(bundle)).toEqual({ cache: 'miss', answer: 42 });
    expect(statSync(cache).size).toBeGreaterThan(0);
    expect(runOnce(bundle)).toEqual({ cache: 'hit', answer: 42 });
    writeFileSync(cache, Buffer.alloc(64, 7));
    expect(runOnce(bundle)).toEqual({ cache: 'rejected', answer: 42 });
    expect(readFileSync(cache).equals(Buffer.alloc(64, 7))).toBe(false);
    expect(runOnce(bundle)).toEqual({ cache: 'hit', answer: 42 });
  });
});
