/**
 * `npm run conformance -- --cozystack DIR`: does dist/ work inside a real
 * Cozystack tree? Lays dist/packages over a copy of the checkout and runs
 * Cozystack's own checks there, then prints one table and exits non-zero on any
 * failure. The checkout is never written to.
 *
 *   --cozystack DIR   a Cozystack checkout (a clone, or ../shared/cozystack-snapshot)
 *   --dist DIR        the synthesized tree (default dist)
 *   --keep            leave the working copy in place and print its path
 *
 * Tools come from Go modules (hack/conformance/build-tools.sh: mikefarah yq,
 * helm-unittest as a helm plugin) and helm as the tests find it (hack/helm.ts).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, statSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IMAGES, imageValues, PLATFORM_REGISTRY } from '../constructs/images.js';
import { INSTALL } from '../constructs/packages/sources.js';
import { unitTestFile } from '../constructs/packages/wrapper-chart.js';
import { ADDRESS_CONTROLLER_PACKAGE, METALLB_IAD_PACKAGE } from '../constructs/platform/variants.js';
import { disabledFor, graphFromDir, mergeGraphs, SELECTIVE_INSTALL_FIXTURE } from '../constructs/platform/source-graph.js';
import { resolveHelm } from './helm.js';
import { EXIT, InputError, isMain, parseArgs, runTool, toolParser, ToolError } from '../lib/cli.js';
import { copyCheckout, overlayPackages, PLATFORM_CHART, renderCozystackValues } from './lib/cozystack-checkout.js';
import { REPO_ROOT } from './lib/paths.js';

export interface StepResult {
  readonly step: string;
  readonly ok: boolean;
  readonly detail: string;
}

interface Env {
  readonly work: string;
  readonly pristine: string;
  readonly helm: string;
  readonly env: NodeJS.ProcessEnv;
}

interface Run {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(env: Env, command: string, args: readonly string[], cwd = env.work): Run {
  const result = spawnSync(command, args, { cwd, env: env.env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { status: result.status ?? -1, stdout: result.stdout ?? '', stderr: result.stderr ?? String(result.error ?? '') };
}

/** helm-unittest's summary: "Tests: N passed, M total" (and failed, when any). */
function testCounts(output: string): { passed: number; total: number } | undefined {
  const line = output.match(/^Tests:\s+(.*)$/m)?.[1];
  if (!line) {
    return undefined;
  }
  const passed = Number(line.match(/(\d+) passed/)?.[1] ?? 0);
  const total = Number(line.match(/(\d+) total/)?.[1] ?? 0);
  return { passed, total };
}

const counts = (c: { passed: number; total: number } | undefined) => (c ? `${c.passed}/${c.total} tests` : 'no test summary');
const tail = (text: string, lines = 3) => text.trim().split('\n').slice(-lines).join(' | ');

/** Cozystack's helm-unittest sweep (hack/helm-unit-tests.sh), with per-package counts. */
function helmUnitTests(env: Env): StepResult[] {
  const baseline = testCounts(run(env, env.helm, ['unittest', '.'], join(env.pristine, PLATFORM_CHART)).stdout);
  const sweep = existsSync(join(env.work, 'hack', 'helm-unit-tests.sh'));
  const results: StepResult[] = [];
  let sweepOutput = '';
  if (sweep) {
    const result = run(env, 'sh', ['hack/helm-unit-tests.sh']);
    sweepOutput = result.stdout + result.stderr;
    results.push({
      step: 'hack/helm-unit-tests.sh (every package with a test target)',
      ok: result.status === 0,
      detail: `${(sweepOutput.match(/^Running tests in (\S+)/gm) ?? []).map((l) => l.slice('Running tests in '.length)).join(', ')}: ${result.status === 0 ? tail(result.stdout, 1) : tail(sweepOutput, 6)}`,
    });
  }
  const packages = [
    { dir: PLATFORM_CHART, name: 'helm unittest packages/core/platform', baseline },
    { dir: join('packages', 'system', INSTALL.addressController.dir), name: `helm unittest packages/system/${INSTALL.addressController.dir}` },
    { dir: join('packages', 'system', INSTALL.metallbIad.dir), name: `helm unittest packages/system/${INSTALL.metallbIad.dir}` },
  ];
  for (const pkg of packages) {
    const result = run(env, env.helm, ['unittest', '.'], join(env.work, pkg.dir));
    const after = testCounts(result.stdout);
    const swept = !sweep || sweepOutput.includes(`Running tests in packages/${pkg.dir.slice('packages/'.length)}`);
    const ok = result.status === 0 && after !== undefined && after.passed === after.total && after.total > 0 && swept;
    const before = pkg.baseline ? `before the overlay ${counts(pkg.baseline)}, after ` : '';
    results.push({
      step: pkg.name,
      ok,
      detail: `${before}${counts(after)}${swept ? '' : '; NOT picked up by hack/helm-unit-tests.sh'}${result.status === 0 ? '' : `: ${tail(result.stdout + result.stderr, 6)}`}`,
    });
  }
  return results;
}

/** packages/system/Makefile: `repo` packages the charts grep finds at 0.0.0; `fix-charts` must leave ours as they are. */
function systemMakefile(env: Env): StepResult {
  const system = join(env.work, 'packages', 'system');
  const listed = run(env, 'make', ['-s', '--eval', 'conformance-charts: ; @echo "$(CHARTS)|$(VERSIONED_CHARTS)"', 'conformance-charts'], system);
  const [charts = '', versioned = ''] = listed.stdout.trim().split('|');
  const ours = [INSTALL.addressController.dir, INSTALL.metallbIad.dir];
  const missing = ours.filter((dir) => !charts.split(/\s+/).includes(dir) || versioned.split(/\s+/).includes(dir));
  const before = ours.map((dir) => readFileSync(join(system, dir, 'Chart.yaml'), 'utf8'));
  const fix = run(env, 'make', ['-s', 'fix-charts'], system);
  const changed = ours.filter((dir, i) => readFileSync(join(system, dir, 'Chart.yaml'), 'utf8') !== before[i]);
  const ok = listed.status === 0 && missing.length === 0 && fix.status === 0 && changed.length === 0;
  return {
    step: 'packages/system/Makefile (CHARTS at 0.0.0, fix-charts)',
    ok,
    detail: ok
      ? 'both packaged at the build version; fix-charts leaves both Chart.yaml unchanged'
      : [listed.status !== 0 ? tail(listed.stderr) : '', missing.length ? `not in CHARTS: ${missing.join(', ')}` : '', fix.status !== 0 ? tail(fix.stderr) : '', changed.length ? `fix-charts rewrote ${changed.join(', ')}` : '']
          .filter(Boolean)
          .join('; '),
  };
}

function selectInstallValidate(env: Env): StepResult {
  const result = run(env, 'sh', ['hack/select-install.sh', '--validate']);
  return { step: 'hack/select-install.sh --validate', ok: result.status === 0, detail: tail(result.stderr, 4) };
}

/** Cozystack's bats suites over hack/ (`make bats-unit-tests` runs every hack/*.bats but hack/e2e-*.bats). */
function batsSuites(env: Env): StepResult[] {
  const suites = readdirSync(join(env.work, 'hack')).filter((f) => f.endsWith('.bats') && !f.startsWith('e2e-')).sort();
  return suites.map((suite) => {
    const tally = (dir: string) => {
      const out = run(env, 'bats', ['--tap', join('hack', suite)], dir).stdout;
      const failing = out.match(/^not ok \d+ .*$/gm) ?? [];
      return { total: Number(out.match(/^1\.\.(\d+)$/m)?.[1] ?? 0), failed: failing.length, failing };
    };
    const before = tally(env.pristine);
    const after = tally(env.work);
    return {
      step: `bats hack/${suite}`,
      ok: after.total > 0 && after.failed === 0,
      detail: `before the overlay ${before.total - before.failed}/${before.total}, after ${after.total - after.failed}/${after.total}${after.failing.length ? `: ${after.failing.join('; ')}` : ''}`,
    };
  });
}

/** The fixture, read as Cozystack reads it, against the real script's closure over the real sources. */
function fixture(env: Env): StepResult {
  const path = join(PLATFORM_CHART, 'tests', 'fixtures', SELECTIVE_INSTALL_FIXTURE);
  const problems: string[] = [];
  const read = run(env, 'yq', ['-r', '.bundles.disabledPackages[]', path]);
  if (read.status !== 0) {
    return { step: 'selective-install fixture', ok: false, detail: `yq ${path}: ${tail(read.stderr)}` };
  }
  const disabled = read.stdout.trim().split('\n').filter(Boolean);
  const closureRun = run(env, 'sh', ['hack/select-install.sh', 'postgres', join(PLATFORM_CHART, 'sources')]);
  const closure = closureRun.stdout.trim().split(/\s+/).filter(Boolean);
  if (closureRun.status !== 0 || closure.length === 0) {
    problems.push(`select-install.sh postgres: ${tail(closureRun.stderr)}`);
  }
  const graph = graphFromDir(join(env.work, PLATFORM_CHART, 'sources'));
  const universe = [...graph.keys()].sort();
  const both = disabled.filter((name) => closure.includes(name));
  const neither = universe.filter((name) => !disabled.includes(name) && !closure.includes(name));
  const unknown = disabled.filter((name) => !graph.has(name));
  if (both.length) problems.push(`disabled but needed: ${both.join(' ')}`);
  if (neither.length) problems.push(`neither needed nor disabled: ${neither.join(' ')}`);
  if (unknown.length) problems.push(`disabled but no such PackageSource: ${unknown.join(' ')}`);
  // The recording synth used must still be this checkout's graph.
  const expected = disabledFor(['postgres'], mergeGraphs([graphFromDir(join(env.pristine, PLATFORM_CHART, 'sources')), graph]));
  if (expected.join(' ') !== [...disabled].sort().join(' ')) {
    problems.push('differs from the postgres selection over this checkout: re-record with npm run select-install -- --record DIR, then npm run synth');
  }
  return {
    step: `selective-install fixture (.bundles.disabledPackages[])`,
    ok: problems.length === 0,
    detail: problems.length ? problems.join('; ') : `${disabled.length} disabled + ${closure.length} needed by select-install.sh postgres = ${universe.length} PackageSources`,
  };
}

const OUR_REFS = Object.values(IMAGES).map((pin) => `${pin.repository}@${pin.digest}`);

function imageRefs(env: Env): StepResult {
  const result = run(env, 'sh', ['-c', '. hack/lib/image-refs.sh && collect_image_refs packages']);
  const refs = result.stdout.trim().split('\n');
  const missing = Object.values(IMAGES).map((pin) => `${pin.repository}@${imageValues(pin).tag.split('@')[1]}`).filter((ref) => !refs.includes(ref));
  return {
    step: 'hack/lib/image-refs.sh collect_image_refs',
    ok: result.status === 0 && missing.length === 0,
    detail: missing.length ? `not enumerated: ${missing.join(', ')}` : `enumerates ours among ${new Set(refs).size} refs: ${OUR_REFS.join(', ')}`,
  };
}

/** The repositories of the refs Cozystack's own enumeration finds in our packages' values. */
function ourRepositories(env: Env): string[] {
  const files = [INSTALL.addressController.dir, INSTALL.metallbIad.dir].map((dir) => `packages/system/${dir}/values.yaml`);
  const result = run(env, 'sh', ['-c', `. hack/lib/image-refs.sh && for f in ${files.join(' ')}; do collect_refs_from_file "$f"; done`]);
  // Shape 1 also yields a bare "<tag>@sha256:..." from a shape-3 tag; only refs with a repository count.
  return [...new Set(result.stdout.trim().split('\n').filter((ref) => ref.includes('/')).map((ref) => ref.replace(/@.*$/, '').replace(/:[^/:]+$/, '')))];
}

function promoteRetag(env: Env): StepResult {
  const result = run(env, 'sh', ['hack/promote-retag.sh', 'v0.0.0-conformance', '--dry-run']);
  const output = result.stdout + result.stderr;
  const ours = ourRepositories(env);
  const selected = ours.filter((repo) => new RegExp(`^▸ ${repo.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s`, 'm').test(output));
  const nothingOwned = /No cozystack-owned digest-pinned image refs found/.test(output);
  const ok = (result.status === 0 || nothingOwned) && selected.length === 0;
  const promoted = (output.match(/^▸ /gm) ?? []).length;
  return {
    step: 'hack/promote-retag.sh --dry-run',
    ok,
    detail: selected.length
      ? `would retag ours: ${selected.join(', ')}`
      : ok
        ? `selects ${promoted} ref(s) under ${PLATFORM_REGISTRY}/, none of ours (${ours.join(', ')})`
        : tail(output, 4),
  };
}

function operatorValuesInstall(env: Env): StepResult[] {
  const values = renderCozystackValues(env.work, env.helm);
  const file = join(env.work, '.conformance-cozystack-values.yaml');
  writeFileSync(file, values);
  return [INSTALL.addressController, INSTALL.metallbIad].map((pkg) => {
    const result = run(env, env.helm, ['template', pkg.releaseName, join('packages', 'system', pkg.dir), '--namespace', pkg.namespace, '-f', file]);
    const ok = result.status === 0 && result.stdout.includes('kind: Deployment');
    return {
      step: `helm template packages/system/${pkg.dir} -f cozystack-values`,
      ok,
      detail: ok ? `renders with the platform's own cozystack-values (${values.split('\n').length} lines, _cluster at the root)` : tail(result.stderr, 4),
    };
  });
}

/**
 * The driver follows MetalLB's include with no change here: on platform charts
 * changed (a) to call common-packages from a new variant and (b) to drop
 * MetalLB from common-packages, a helm-unittest suite expects the driver to
 * appear and to go.
 */
function variantGating(env: Env): StepResult {
  const platform = join(env.work, PLATFORM_CHART);
  const cases = [
    {
      name: 'a new variant calling common-packages',
      from: join('templates', 'bundles', 'system.yaml'),
      replace: '{{- if eq .Values.bundles.system.variant "isp-full" }}',
      by: '{{- if has .Values.bundles.system.variant (list "isp-full" "isp-conformance") }}',
      variant: 'isp-conformance',
      expected: [ADDRESS_CONTROLLER_PACKAGE, METALLB_IAD_PACKAGE],
    },
    {
      name: 'MetalLB dropped from common-packages',
      from: join('templates', '_helpers.tpl'),
      replace: '{{include "cozystack.platform.package.default" (list "cozystack.metallb" $root) }}',
      by: '',
      variant: 'isp-full',
      expected: [ADDRESS_CONTROLLER_PACKAGE],
    },
  ];
  const problems: string[] = [];
  for (const c of cases) {
    const chart = mkdtempSync(join(tmpdir(), 'platform-mutant-'));
    cpSync(platform, chart, { recursive: true });
    const file = join(chart, c.from);
    const text = readFileSync(file, 'utf8');
    if (!text.includes(c.replace)) {
      problems.push(`${c.name}: ${c.from} no longer holds ${JSON.stringify(c.replace)}; update this check`);
      continue;
    }
    writeFileSync(file, text.replace(c.replace, c.by));
    rmSync(join(chart, 'tests'), { recursive: true, force: true });
    mkdirSync(join(chart, 'tests'));
    const all = [ADDRESS_CONTROLLER_PACKAGE, METALLB_IAD_PACKAGE];
    writeFileSync(
      join(chart, 'tests', 'conformance_test.yaml'),
      unitTestFile([
        {
          suite: c.name,
          templates: ['templates/bundles/addresses.yaml', 'templates/bundles/system.yaml'],
          release: { name: 'cozystack-platform', namespace: 'cozy-system' },
          tests: [
            {
              it: `renders ${c.expected.join(' and ')}`,
              template: 'templates/bundles/addresses.yaml',
              set: { 'bundles.system.enabled': true, 'bundles.system.variant': c.variant, 'bundles.enabledPackages': all },
              asserts: [
                { hasDocuments: { count: c.expected.length } },
                ...c.expected.map((name) => ({ containsDocument: { kind: 'Package', apiVersion: 'cozystack.io/v1alpha1', name, any: true } })),
              ],
            },
          ],
        },
      ]),
    );
    const result = run(env, env.helm, ['unittest', '.'], chart);
    if (result.status !== 0) {
      problems.push(`${c.name}: ${tail(result.stdout, 8)}`);
    }
    rmSync(chart, { recursive: true, force: true });
  }
  return {
    step: 'variant gating follows MetalLB (mutated platform chart)',
    ok: problems.length === 0,
    detail: problems.length ? problems.join('; ') : cases.map((c) => `${c.name}: ${c.expected.join(' + ')}`).join('; '),
  };
}

function tools(): string {
  if (process.env.CONFORMANCE_TOOLS) {
    return process.env.CONFORMANCE_TOOLS;
  }
  const result = spawnSync('bash', [join(REPO_ROOT, 'hack', 'conformance', 'build-tools.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (result.status !== 0) {
    throw new ToolError(['hack/conformance/build-tools.sh failed (yq and helm-unittest are built from Go modules)'], EXIT.INTERNAL);
  }
  return result.stdout.trim();
}

export function conformance(checkout: string, dist: string): { results: StepResult[]; work: string } {
  const toolsDir = tools();
  const helmBin = resolveHelm();
  const bin = mkdtempSync(join(tmpdir(), 'conformance-bin-'));
  symlinkSync(helmBin, join(bin, 'helm'));
  symlinkSync(join(toolsDir, 'bin', 'yq'), join(bin, 'yq'));
  const pristine = copyCheckout(checkout, 'cozystack-pristine-');
  const work = copyCheckout(checkout, 'cozystack-conformance-');
  overlayPackages(work, join(dist, 'packages'));
  const notes = stubTrimmed(work);
  stubTrimmed(pristine);
  const helmHome = mkdtempSync(join(tmpdir(), 'conformance-helm-'));
  const env: Env = {
    work,
    pristine,
    helm: join(bin, 'helm'),
    env: {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      HELM_PLUGINS: join(toolsDir, 'helm-plugins'),
      HELM_CACHE_HOME: join(helmHome, 'cache'),
      HELM_CONFIG_HOME: join(helmHome, 'config'),
      HELM_DATA_HOME: join(helmHome, 'data'),
      LC_ALL: 'C',
    },
  };
  const steps: [string, (env: Env) => StepResult | StepResult[]][] = [
    ['helm-unittest', helmUnitTests],
    ['packages/system/Makefile', systemMakefile],
    ['hack/select-install.sh --validate', selectInstallValidate],
    ['bats hack/*.bats', batsSuites],
    ['selective-install fixture', fixture],
    ['hack/lib/image-refs.sh', imageRefs],
    ['hack/promote-retag.sh --dry-run', promoteRetag],
    ['helm template with cozystack-values', operatorValuesInstall],
    ['variant gating', variantGating],
  ];
  const results = steps.flatMap(([name, step]) => {
    try {
      return step(env);
    } catch (error) {
      // A check that cannot run is a failed check, said in its row.
      const detail = error instanceof ToolError ? error.lines.join('; ') : String((error as Error).stack ?? error);
      return [{ step: name, ok: false, detail }];
    }
  });
  rmSync(pristine, { recursive: true, force: true });
  rmSync(bin, { recursive: true, force: true });
  return { results: [...notes, ...results], work };
}

/**
 * What a trimmed checkout (the snapshot) lacks, stood in for in the copies only:
 * hack/common-envs.mk, which every package Makefile includes (without it
 * `make -n test` fails and the sweep skips the package; its REGISTRY and
 * IMAGE_TAG decide neither `test` nor CHARTS), and hack/e2e-chainsaw, the suites
 * `select-install.sh --validate` maps (empty: the graph is checked, no suite).
 */
function stubTrimmed(checkout: string): StepResult[] {
  const notes: StepResult[] = [];
  const envs = join(checkout, 'hack', 'common-envs.mk');
  if (!existsSync(envs)) {
    writeFileSync(envs, '');
    notes.push({ step: 'hack/common-envs.mk', ok: true, detail: 'absent from this checkout: an empty stub in the copy, so package Makefiles load' });
  }
  const suites = join(checkout, 'hack', 'e2e-chainsaw');
  if (!existsSync(suites)) {
    mkdirSync(suites);
    notes.push({ step: 'hack/e2e-chainsaw', ok: true, detail: 'absent from this checkout: an empty folder in the copy, so --validate checks the graph alone' });
  }
  return notes;
}

export function table(results: readonly StepResult[]): string {
  const width = Math.max(...results.map((r) => r.step.length));
  const rows = results.map((r) => `${r.ok ? 'PASS' : 'FAIL'}  ${r.step.padEnd(width)}  ${r.detail}`);
  const failed = results.filter((r) => !r.ok).length;
  return [...rows, `conformance: ${results.length - failed} passed, ${failed} failed`].join('\n') + '\n';
}

export function main(argv: string[]): number {
  const parser = toolParser('conformance', argv, '--cozystack DIR [--dist DIR] [--keep]')
    .option('cozystack', { type: 'string', demandOption: true, describe: 'A Cozystack checkout (a clone, or ../shared/cozystack-snapshot)' })
    .option('dist', { type: 'string', default: join(REPO_ROOT, 'dist'), describe: 'The synthesized tree' })
    .option('keep', { type: 'boolean', default: false, describe: 'Leave the working copy in place and print its path' });
  const args = parseArgs(parser, argv);
  if (!args) {
    return EXIT.OK;
  }
  for (const [flag, dir] of [['--cozystack', args.cozystack], ['--dist', args.dist]] as const) {
    if (!existsSync(dir) || !statSync(dir).isDirectory()) {
      throw new InputError(`${flag} ${dir}: no such directory`);
    }
  }
  if (!existsSync(join(args.cozystack, 'packages', 'core', 'platform'))) {
    throw new InputError(`--cozystack ${args.cozystack}: not a Cozystack checkout (no packages/core/platform)`);
  }
  const { results, work } = conformance(args.cozystack, args.dist);
  process.stdout.write(table(results));
  if (args.keep) {
    process.stdout.write(`conformance: working copy kept at ${work}\n`);
  } else {
    rmSync(work, { recursive: true, force: true });
  }
  return results.every((r) => r.ok) ? EXIT.OK : EXIT.CHECK_FAILED;
}

if (isMain(import.meta.url)) {
  runTool('conformance', main);
}
