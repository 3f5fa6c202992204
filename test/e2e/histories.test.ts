/**
 * Randomized histories: for each of six fixed seeds, 150 operations drawn from
 * a seeded PRNG (claims and Services made, re-pointed, retyped and deleted,
 * names reused, Services of the wrong family, two Services naming one claim,
 * Shared claims whose Services share one IP on ports 80, 443 or 8080 that
 * overlap or not, claims switched between Shared and Exclusive, ports changed,
 * Dual claims on single-stack Services and Services switched between single-
 * and dual-stack, Services re-applied (server-side apply as helm-controller;
 * a read-modify-write update) and replaced without the driver's keys, a class
 * with a loadBalancerClass served by a second MetalLB started with --lb-class
 * and Services of a matching or mismatching loadBalancerClass (switched by
 * delete and create: the field is immutable), classes switched between L2 and
 * BGP announcement (their pools and addresses must not move), the admin pinning Services by
 * hand, the admin's mistakes (classes whose own ranges overlap, apart from
 * the world's classes or inside one; duplicate IPAddresses of recorded IPs,
 * some spelled ::ffff:a.b.c.d; spec edits of claims the apiserver must
 * refuse), kill -9 of either controller, an apiserver restart) against one
 * platform with the core and the driver running. Every ten operations, and at
 * the end, the ledger is let go quiet and the invariants of
 * support/histories/invariants.ts are checked; a violation that persists past
 * the settle time fails the seed with the seed, the violation and the last
 * operations before it. Between seeds everything is deleted again (a leak
 * fails the seed too), so the next seed reuses the same names.
 *
 *   HISTORY_SEEDS=7,8   run these seeds instead of the fixed ones
 *   HISTORY_OPS=300     operations per seed
 *   HISTORY_VERBOSE=1   print every seed's whole history, passed or not
 *
 * `npm run soak` runs the same generator and checker for as long as asked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type Platform } from './support/platform.js';
import { Controllers } from './support/histories/controllers.js';
import { keepLogs } from './support/histories/logs.js';
import { failed, formatEntry, formatReport } from './support/histories/report.js';
import { resetWorld } from './support/histories/reset.js';
import { DEFAULT_TIMING, runHistory } from './support/histories/runner.js';
import { SERVICE_CIDRS, setUpWorld, type World } from './support/histories/world.js';
import { recordFault, recordScenario } from './support/summary.js';

const SEEDS = process.env.HISTORY_SEEDS ? process.env.HISTORY_SEEDS.split(',').map((s) => Number(s.trim())) : [11, 23, 37, 41, 53, 67];
const OPERATIONS = Number(process.env.HISTORY_OPS ?? 150);
const CHECK_EVERY = 10;
/**
 * No operation of a seed starts after this long; the last checkpoint and the cleanup follow.
 * Measured on 2 cores with a driver that keeps the invariants: 150 operations take 80-120 s,
 * the six seeds about 10 minutes with the platform's start.
 */
const SEED_BUDGET_MS = 125_000;
/**
 * No operation of any seed starts this long after the first seed began, so a broken driver
 * (every checkpoint waiting out the settle time) cannot stretch the file much past 12 minutes;
 * a seed that gets no time at all is skipped, and says so.
 */
const FILE_BUDGET_MS = 10.5 * 60_000;
/** quiet 3 s (at most 30 s), then violations get 60 s to clear. */
const TIMING = DEFAULT_TIMING;
/** How long the cleanup between seeds may take before what is left counts as a leak. */
const RESET_MS = 60_000;
const SEED_TIMEOUT_MS = SEED_BUDGET_MS + TIMING.quietMaxMs + TIMING.settleMs + RESET_MS + 120_000;

if (SEEDS.some((s) => !Number.isInteger(s) || s < 0 || s > 0xffffffff) || !(OPERATIONS > 0)) {
  throw new Error(`HISTORY_SEEDS must be comma-separated integers in 0..2^32-1 and HISTORY_OPS a positive number (got ${process.env.HISTORY_SEEDS}, ${process.env.HISTORY_OPS})`);
}

let platform: Platform;
let world: World;
let controllers: Controllers;
let firstSeedStarted: number | undefined;

beforeAll(async () => {
  platform = await startPlatform([], SERVICE_CIDRS);
  world = await setUpWorld(platform);
  controllers = new Controllers(platform);
  await controllers.start();
}, 600_000);

afterAll(async () => {
  await platform?.stop();
});

describe('randomized histories', () => {
  for (const [i, seed] of SEEDS.entries()) {
    it(
      `seed ${seed}: ${OPERATIONS} operations keep the ledger's invariants`,
      async (context) => {
        firstSeedStarted ??= Date.now();
        const deadline = Math.min(Date.now() + SEED_BUDGET_MS, firstSeedStarted + FILE_BUDGET_MS);
        if (deadline <= Date.now()) {
          context.skip(`the file's budget of ${FILE_BUDGET_MS / 60_000} min is spent`);
        }
        let leaks: string[] = [];
        let report;
        let logs: string | undefined;
        try {
          report = await runHistory(
            { platform, controllers, lbMetallb: world.lbMetallb },
            { seed, operations: OPERATIONS, checkEvery: CHECK_EVERY, deadline, faults: true, timing: TIMING, keepGoing: false },
          );
          if (failed(report)) {
            logs = await keepLogs(platform, `seed-${seed}`); // before the cleanup takes the objects away
          }
        } finally {
          // Also after a history that threw: the next seed starts from nothing either way.
          leaks = await resetWorld(platform, RESET_MS);
        }
        for (const e of report.history.filter((e) => e.fault)) {
          recordFault(`history seed ${seed}: ${e.text.split(' → ')[0]}`);
        }
        // The seeds before this one ran on the same platform, and what they left (in the
        // controllers' memory, in MetalLB) is part of this seed's history: run them too.
        const seeds = SEEDS.slice(0, i + 1).join(',');
        const text = formatReport(report, { leaks, reproduce: `HISTORY_SEEDS=${seeds} HISTORY_OPS=${OPERATIONS} npx vitest run --config vitest.e2e.config.ts test/e2e/histories.test.ts` });
        if (process.env.HISTORY_VERBOSE) {
          process.stdout.write(`seed ${seed}, the whole history:\n${report.history.map((e) => `  ${formatEntry(e)}\n`).join('')}`);
        }
        process.stdout.write(`${text.split('\n').filter((line, n) => n === 0 || line.startsWith('operations (')).join('\n')}\n`);
        if (failed(report, leaks)) {
          expect.fail(`${text}\nlogs, Events and objects: ${logs ?? (await keepLogs(platform, `seed-${seed}`))}`);
        }
        recordScenario(`history seed ${seed}: ${report.operations} operations, ${report.faults} faults, invariants held`);
      },
      SEED_TIMEOUT_MS,
    );
  }
});
