/**
 * `npm run synth` against `helm template` of the four charts it writes, as
 * wall time of fresh processes (what a maintainer waits for). Runs alternate so
 * that machine noise hits both; medians are compared.
 *
 * The synth side is the command package.json's `synth` script runs (node on
 * the prebuilt bundle, synth/bin.mjs); npm's own start (the same for any
 * script) is measured apart and reported beside it, since helm's side has no
 * counterpart to it.
 *
 * The target's figure re-synthesizes into one folder, as a maintainer's runs
 * do (synth then finds every file already there and writes nothing); synthesis
 * into a fresh folder, every file written, is measured beside it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { resolveHelm } from '../helm.js';
import { REPO_ROOT } from '../lib/paths.js';

/** The charts synth writes, as helm renders them. */
export const RENDERED_CHARTS = ['charts/address-controller', 'charts/metallb-iad', 'packages/system/address-controller', 'packages/system/metallb-iad'];

export interface SynthVsHelm {
  /** Re-synthesizing into an up-to-date folder (what a maintainer's second run does: nothing to rewrite). */
  readonly synthMs: number;
  /** Synthesizing into a fresh folder: every file and folder written. */
  readonly freshMs: number;
  readonly helmMs: number;
  readonly npmOverheadMs: number;
  /** synthMs / helmMs: the median ratio of the pairs. */
  readonly ratio: number;
  readonly freshRatio: number;
  readonly runs: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function wall(command: string, args: readonly string[], cwd = REPO_ROOT): number {
  const started = performance.now();
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = performance.now() - started;
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr}`);
  }
  return ms;
}

export function benchSynthVsHelm(runs = 11): SynthVsHelm {
  const script = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.synth!;
  const [program, ...scriptArgs] = script.split(' ');
  if (program !== 'node') {
    throw new Error(`package.json scripts.synth is ${JSON.stringify(script)}; the bench expects "node ..."`);
  }
  const out = join(mkdtempSync(join(tmpdir(), 'bench-synth-')), 'dist');
  const helm = resolveHelm();
  const dist = join(REPO_ROOT, 'dist');
  const synthOnce = () => wall(process.execPath, [...scriptArgs, '--quiet', '--out', out]);
  const fresh = mkdtempSync(join(tmpdir(), 'bench-synth-fresh-'));
  let freshCount = 0;
  const freshOnce = () => wall(process.execPath, [...scriptArgs, '--quiet', '--out', join(fresh, String(freshCount++))]);
  const helmOnce = () => RENDERED_CHARTS.reduce((ms, chart) => ms + wall(helm, ['template', 'bench', join(dist, chart)]), 0);
  const noop = mkdtempSync(join(tmpdir(), 'bench-npm-'));
  const npmOnce = () => {
    const started = performance.now();
    spawnSync('npm', ['run', '-s', 'noop'], { cwd: noop, stdio: 'ignore', env: { ...process.env, npm_config_update_notifier: 'false' } });
    return performance.now() - started;
  };
  // A package with a no-op script: what npm costs before any script runs.
  writeFileSync(join(noop, 'package.json'), '{"name":"noop","version":"0.0.0","scripts":{"noop":"true"}}\n');
  // Warm-up: the bundle is built when the sources changed, and the page cache is filled.
  synthOnce();
  helmOnce();
  const synth: number[] = [];
  const freshTimes: number[] = [];
  const helmTimes: number[] = [];
  const npm: number[] = [];
  // Alternating, so that the machine's noise falls on every side alike.
  for (let i = 0; i < runs; i++) {
    synth.push(synthOnce());
    helmTimes.push(helmOnce());
    freshTimes.push(freshOnce());
    npm.push(npmOnce());
  }
  rmSync(out, { recursive: true, force: true });
  rmSync(fresh, { recursive: true, force: true });
  rmSync(noop, { recursive: true, force: true });
  const synthMs = median(synth);
  const freshMs = median(freshTimes);
  const helmMs = median(helmTimes);
  return { synthMs, freshMs, helmMs, npmOverheadMs: median(npm), ratio: synthMs / helmMs, freshRatio: freshMs / helmMs, runs };
}
