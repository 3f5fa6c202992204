/**
 * `npm run soak -- --minutes N --seed S`: the randomized histories of
 * test/e2e/histories.test.ts, run as one long history on a platform of its
 * own (etcd, kube-apiserver, kube-controller-manager, MetalLB and a second
 * MetalLB started with --lb-class, the core and the driver on loopback) until
 * the minutes run out: the same generator, runner and invariant checker (test/e2e/support/histories/). By default it
 * goes on after a violation, so one run collects every distinct one; each
 * checkpoint prints a line. At the end: operations, faults, violations and
 * wall time, and the last operations. Exit 1 on a violation (or a controller
 * that exited by itself), 2 on bad flags, 3 when the platform cannot start.
 * Needs the e2e binaries (bash hack/e2e/build-binaries.sh; $E2E_BIN).
 */
import { binaries } from '../test/e2e/support/binaries.js';
import { startPlatform } from '../test/e2e/support/platform.js';
import { Controllers } from '../test/e2e/support/histories/controllers.js';
import { keepLogs } from '../test/e2e/support/histories/logs.js';
import { failed, formatReport } from '../test/e2e/support/histories/report.js';
import { DEFAULT_TIMING, runHistory } from '../test/e2e/support/histories/runner.js';
import { SERVICE_CIDRS, setUpWorld } from '../test/e2e/support/histories/world.js';
import { EXIT, InputError, isMain, parseArgs, runTool, toolParser, ToolError } from '../lib/cli.js';

export interface SoakOptions {
  readonly minutes: number;
  readonly seed: number;
  readonly checkEvery: number;
  readonly faults: boolean;
  readonly failFast: boolean;
}

/** An integer flag within bounds, or bad input naming the flag. */
function integer(flag: string, text: string, min: number, max: number): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text) : NaN;
  if (!(n >= min && n <= max)) {
    throw new InputError(`--${flag} must be an integer from ${min} to ${max} (got ${JSON.stringify(text)})`);
  }
  return n;
}

/** The options, or undefined when --help or --version was answered. */
export function parseSoakArgs(argv: readonly string[]): SoakOptions | undefined {
  const parser = toolParser('soak', argv, '[--minutes N] [--seed S] [--check-every K] [--no-faults] [--fail-fast]')
    .option('minutes', { type: 'string', describe: 'Start operations for this long, then check once more (default 10; a decimal is fine)' })
    .option('seed', { type: 'string', describe: 'The PRNG seed, 0..4294967295 (default: from the clock; printed, so a run can be repeated)' })
    .option('check-every', { type: 'string', describe: 'Check the invariants after every K operations (default 10)' })
    .option('faults', { type: 'boolean', default: true, describe: 'kill -9 of either controller and kube-apiserver restarts among the operations (--no-faults: none)' })
    .option('fail-fast', { type: 'boolean', default: false, describe: 'Stop at the first violation instead of collecting them all' });
  const args = parseArgs(parser, argv);
  if (!args) {
    return undefined;
  }
  const minutes = Number(args.minutes ?? '10');
  if (!(Number.isFinite(minutes) && minutes > 0) || !/^\s*\d*\.?\d+\s*$/.test(args.minutes ?? '10')) {
    throw new InputError(`--minutes must be a positive number (got ${JSON.stringify(args.minutes)})`);
  }
  return {
    minutes,
    seed: args.seed === undefined ? Date.now() % 2 ** 32 : integer('seed', args.seed, 0, 2 ** 32 - 1),
    checkEvery: integer('check-every', args['check-every'] ?? '10', 1, 10_000),
    faults: args.faults,
    failFast: args['fail-fast'],
  };
}

const clock = (ms: number) => `${Math.floor(ms / 60_000)}m${String(Math.round((ms % 60_000) / 1000)).padStart(2, '0')}s`;

async function main(argv: string[]): Promise<number> {
  const options = parseSoakArgs(argv);
  if (!options) {
    return EXIT.OK;
  }
  try {
    binaries();
  } catch (error) {
    throw new ToolError([(error as Error).message], EXIT.INTERNAL);
  }
  const say = (line: string) => process.stdout.write(`soak: ${line}\n`);
  say(`seed ${options.seed}, ${options.minutes} min, a check every ${options.checkEvery} operations, faults ${options.faults ? 'on' : 'off'}`);
  const started = Date.now();
  const platform = await startPlatform([], SERVICE_CIDRS);
  let stop = false;
  const onSigint = () => {
    stop = true; // finish the operation under way, check once more, report, stop the platform
    say('interrupted: stopping after this operation');
  };
  process.once('SIGINT', onSigint);
  try {
    const world = await setUpWorld(platform);
    const controllers = new Controllers(platform);
    await controllers.start();
    say(`platform up in ${clock(Date.now() - started)}`);
    const report = await runHistory(
      { platform, controllers, lbMetallb: world.lbMetallb },
      {
        seed: options.seed,
        operations: Infinity,
        checkEvery: options.checkEvery,
        deadline: Date.now() + options.minutes * 60_000,
        faults: options.faults,
        timing: DEFAULT_TIMING,
        keepGoing: !options.failFast,
        stopRequested: () => stop,
        log: say,
      },
    );
    const reproduce = `npm run soak -- --minutes ${options.minutes} --seed ${options.seed} --check-every ${options.checkEvery}${options.faults ? '' : ' --no-faults'}`;
    process.stdout.write(`${formatReport(report, { reproduce, beforeEachViolation: 15 })}\n`);
    say(
      `${report.operations} operations, ${report.faults} faults, ${report.checks} checks, ${report.violations.length} violations, ` +
        `${report.crashes.length} crashes; wall ${clock(Date.now() - started)}`,
    );
    if (failed(report)) {
      say(`logs, Events and objects kept in ${await keepLogs(platform, `soak-${options.seed}`)}`);
      return EXIT.CHECK_FAILED;
    }
    return EXIT.OK;
  } finally {
    process.off('SIGINT', onSigint);
    await platform.stop();
  }
}

if (isMain(import.meta.url)) {
  runTool('soak', main);
}
