/**
 * Runs a history: operations drawn from a seed, and every few operations a
 * checkpoint that waits for the ledger to go quiet and then checks the
 * invariants, giving a violation a bounded time to clear before it counts.
 * The suite and the soak both run this.
 */
import { applyOperation, type Target } from './apply.js';
import { BoundMemory, checkInvariants, checkOutcome, ReleasedMemory, type Violation } from './invariants.js';
import { describeOperation, isFault, Model, nextMistake, nextOperation, tallyKey } from './operations.js';
import { Rng } from './prng.js';
import { fingerprint, readSnapshot, type Snapshot } from './snapshot.js';
import { seconds, sleep } from './time.js';

export interface Timing {
  /** The ledger counts as quiet once its fingerprint has not changed for this long. */
  readonly quietMs: number;
  /** A checkpoint checks anyway after this long without quiet (and notes it). */
  readonly quietMaxMs: number;
  /** How long a violation may take to clear before it counts. */
  readonly settleMs: number;
  readonly pollMs: number;
  /** Operations are spaced by a drawn pause in [0, this). */
  readonly pauseMaxMs: number;
}

export const DEFAULT_TIMING: Timing = { quietMs: 3_000, quietMaxMs: 30_000, settleMs: 60_000, pollMs: 500, pauseMaxMs: 300 };

export interface HistoryOptions {
  readonly seed: number;
  /** At most this many operations (Infinity: until the deadline). */
  readonly operations: number;
  /** A checkpoint after every this many operations, and one at the end. */
  readonly checkEvery: number;
  /** No operation starts after this time (ms since the epoch). */
  readonly deadline?: number;
  readonly faults: boolean;
  readonly timing: Timing;
  /**
   * Go on after a violation (the soak). A violation already reported (the same invariant and
   * object) is not reported again and does not hold up later checkpoints.
   */
  readonly keepGoing: boolean;
  /** Asked before each operation: true stops the history there (e.g. on SIGINT). */
  readonly stopRequested?: () => boolean;
  /** Progress lines (checkpoints, faults). */
  readonly log?: (line: string) => void;
}

export interface HistoryEntry {
  /** The operation's number, from 1; 0 for a checkpoint. */
  readonly index: number;
  /** ms since the history began. */
  readonly at: number;
  readonly text: string;
  /** A kill -9 or an apiserver restart. */
  readonly fault?: true;
}

export interface FoundViolation extends Violation {
  /** Operations done when it was found. */
  readonly afterOperation: number;
  /** How many history entries preceded it. */
  readonly historyLength: number;
  /** How long, at the end of the settle wait, it had been present without a break. */
  readonly persistedMs: number;
}

export interface HistoryReport {
  readonly seed: number;
  readonly operationsPlanned: number;
  operations: number;
  faults: number;
  checks: number;
  readonly violations: FoundViolation[];
  /** Controllers that exited by themselves (a crash is a failure too). */
  readonly crashes: string[];
  readonly history: HistoryEntry[];
  /** Per kind of operation: how many ran, and how many the cluster accepted (the rest were refused or skipped). */
  readonly mix: Record<string, { ran: number; ok: number }>;
  /** Why the history ended before its planned operations, if it did. */
  stoppedEarly?: string;
  wallMs: number;
}

export async function runHistory(target: Target, options: HistoryOptions): Promise<HistoryReport> {
  const started = Date.now();
  const rng = new Rng(options.seed);
  // Pauses from a PRNG of their own: the operations of a seed do not depend on the timing settings.
  const pauses = new Rng(options.seed ^ 0x5eed5eed);
  // The admin's mistakes from a PRNG of their own too: a seed's tenant operations stay what they were.
  const mistakes = new Rng(options.seed ^ 0x0badc1a5);
  const model = new Model();
  const released = new ReleasedMemory();
  const bound = new BoundMemory();
  const known = new Set<string>();
  const report: HistoryReport = {
    seed: options.seed,
    operationsPlanned: options.operations,
    operations: 0,
    faults: 0,
    checks: 0,
    violations: [],
    crashes: [],
    history: [],
    mix: {},
    wallMs: 0,
  };
  const note = (index: number, text: string, fault = false) => report.history.push({ index, at: Date.now() - started, text, ...(fault ? { fault } : {}) });
  const log = options.log ?? (() => undefined);

  const checkpoint = async (): Promise<boolean> => {
    report.checks++;
    for (const crash of await target.controllers.reviveExited()) {
      report.crashes.push(`after operation ${report.operations}: ${crash}`);
      note(0, `check ${report.checks}: ${crash.split('\n')[0]}; started again`);
    }
    for (const m of [target.platform.metallb, ...(target.lbMetallb ? [target.lbMetallb.process] : [])]) {
      if (m.process.exitCode !== null) {
        throw new Error(`MetalLB's controller ${m.name} exited (${m.process.exitCode}):\n${m.tail(15)}`);
      }
    }
    const quiet = await waitForQuiet(target, options.timing, options.stopRequested);
    const { found, census } = await settle(target, options.timing, released, bound, known, options.stopRequested);
    for (const v of found) {
      known.add(subject(v));
      report.violations.push({ ...v, afterOperation: report.operations, historyLength: report.history.length });
    }
    const summary = `check ${report.checks} after operation ${report.operations}: ${quiet.quiet ? `quiet after ${seconds(quiet.ms)}` : `never quiet in ${seconds(quiet.ms)}`}; ${found.length === 0 ? 'invariants hold' : `${found.length} violation(s) persisting past ${seconds(options.timing.settleMs)}`}; ${census}`;
    note(0, summary);
    log(summary);
    return found.length === 0 && report.crashes.length === 0;
  };

  let sinceCheck = 0;
  for (let i = 1; i <= options.operations; i++) {
    if (options.deadline !== undefined && Date.now() >= options.deadline) {
      report.stoppedEarly = `time budget spent after ${report.operations} operations`;
      break;
    }
    if (options.stopRequested?.()) {
      report.stoppedEarly = `stopped on request after ${report.operations} operations`;
      break;
    }
    const op = nextOperation(rng, model, { faults: options.faults });
    report.operations = i;
    // A tenant's operation, then (now and then) an admin's mistake right after it.
    const slip = nextMistake(mistakes, model);
    let refusedWrongly = false;
    for (const each of slip ? [op, slip] : [op]) {
      const outcome = await applyOperation(target, each);
      const tally = (report.mix[tallyKey(each)] ??= { ran: 0, ok: 0 });
      tally.ran++;
      tally.ok += outcome.startsWith('ok') ? 1 : 0;
      if (isFault(each)) {
        report.faults++;
        log(`operation ${i}: ${describeOperation(each)}: ${outcome}`);
      }
      note(i, `${describeOperation(each)} → ${outcome}`, isFault(each));
      // An answer that is itself a violation (an edit the apiserver should have refused) counts at once.
      const answered = checkOutcome(each, outcome);
      if (answered && !known.has(subject(answered))) {
        known.add(subject(answered));
        report.violations.push({ ...answered, afterOperation: i, historyLength: report.history.length, persistedMs: 0 });
        log(`operation ${i}: ${answered.detail}`);
        refusedWrongly = true;
      }
    }
    if (refusedWrongly && !options.keepGoing) {
      report.stoppedEarly = `stopped at the first violation, after ${report.operations} operations`;
      break;
    }
    if (++sinceCheck >= options.checkEvery) {
      sinceCheck = 0;
      if (!(await checkpoint()) && !options.keepGoing) {
        report.stoppedEarly = `stopped at the first violation, after ${report.operations} operations`;
        break;
      }
    }
    await sleep(pauses.int(options.timing.pauseMaxMs));
  }
  if (sinceCheck > 0 && (options.keepGoing || report.violations.length === 0) && !options.stopRequested?.()) {
    await checkpoint();
  }
  report.wallMs = Date.now() - started;
  return report;
}

/** Waits until the ledger's fingerprint holds still for quietMs (bounded by quietMaxMs). */
export async function waitForQuiet(target: Target, timing: Timing, stopRequested = () => false): Promise<{ quiet: boolean; ms: number }> {
  const started = Date.now();
  let last = '';
  let since = Date.now();
  while (Date.now() - started < timing.quietMaxMs && !stopRequested()) {
    const snapshot = await tryReadSnapshot(target);
    const print = snapshot ? fingerprint(snapshot) : 'unreadable';
    if (print !== last) {
      last = print;
      since = Date.now();
    } else if (snapshot && Date.now() - since >= timing.quietMs) {
      return { quiet: true, ms: Date.now() - started };
    }
    await sleep(timing.pollMs);
  }
  return { quiet: false, ms: Date.now() - started };
}

/**
 * Checks the invariants until none but the already known are violated, or
 * settleMs passes; returns the new violations still present then, each with
 * how long it had been present without a break.
 */
async function settle(
  target: Target,
  timing: Timing,
  released: ReleasedMemory,
  bound: BoundMemory,
  known: ReadonlySet<string>,
  stopRequested = () => false,
): Promise<{ found: Omit<FoundViolation, 'afterOperation' | 'historyLength'>[]; census: string }> {
  const started = Date.now();
  const presentSince = new Map<string, number>();
  let last: Violation[] = [];
  let read = false;
  let census = '';
  for (;;) {
    const snapshot = await tryReadSnapshot(target);
    if (snapshot) {
      read = true;
      census = censusOf(snapshot);
      last = checkInvariants(snapshot, released, bound).filter((v) => !known.has(subject(v)));
      released.observe(snapshot);
      bound.observe(snapshot);
      const present = new Set(last.map(subject));
      for (const k of [...presentSince.keys()].filter((k) => !present.has(k))) {
        presentSince.delete(k);
      }
      for (const k of present) {
        if (!presentSince.has(k)) {
          presentSince.set(k, Date.now());
        }
      }
      if (last.length === 0) {
        return { found: [], census };
      }
    }
    if (stopRequested()) {
      return { found: [], census: `${census}; interrupted before the invariants settled` };
    }
    if (Date.now() - started >= timing.settleMs) {
      if (!read) {
        throw new Error(`the apiserver did not answer for ${seconds(timing.settleMs)}`);
      }
      return { found: last.map((v) => ({ ...v, persistedMs: Date.now() - (presentSince.get(subject(v)) ?? Date.now()) })), census };
    }
    await sleep(timing.pollMs);
  }
}

/** A violation's identity: the invariant and the object; the detail may change while the fault stays. */
const subject = (v: Violation) => `${v.invariant} ${v.object}`;

/** What the ledger holds, in one line: shows a history does more than nothing. */
function censusOf(snapshot: Snapshot): string {
  const bound = snapshot.claims.filter((c) => c.phase === 'Bound').length;
  const phases = new Map<string, number>();
  for (const a of snapshot.addresses) {
    phases.set(a.phase ?? 'none', (phases.get(a.phase ?? 'none') ?? 0) + 1);
  }
  const carrying = snapshot.services.filter((s) => !s.placeholder && s.ingress.length > 0).length;
  const holds = snapshot.services.filter((s) => s.placeholder && s.ingress.length > 0).length;
  const addresses = [...phases].sort().map(([p, n]) => `${n} ${p}`).join(', ');
  // Shows a history shares IPs at all: a Shared claim's address named with more than one carrier.
  const shared = snapshot.addresses.filter((a) => (a.sharedWith ?? []).length > 0).length;
  const sharedClaims = snapshot.claims.filter((c) => c.sharing === 'Shared').length;
  const portInUse = snapshot.services.filter((s) => s.attached?.reason === 'PortInUse').length;
  return (
    `${snapshot.claims.length} claims (${bound} Bound, ${sharedClaims} Shared), addresses: ${addresses || 'none'}, ${holds} holding placeholders, ` +
    `${carrying} other Services carrying, ${shared} addresses shared, ${portInUse} Services refused PortInUse`
  );
}

/** A snapshot, or undefined while the apiserver does not answer (it may be restarting). */
async function tryReadSnapshot(target: Target): Promise<Snapshot | undefined> {
  try {
    return await readSnapshot(target.platform.admin);
  } catch {
    return undefined;
  }
}
