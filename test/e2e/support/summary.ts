/**
 * The closing table of an end-to-end run: scenarios passed, faults injected,
 * addresses lost. Each suite appends to a file the global setup names; the
 * global teardown prints the totals once, after every suite.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';

interface Entry {
  readonly kind: 'scenario' | 'fault';
  readonly name: string;
  readonly addressesLost?: number;
}

function record(entry: Entry): void {
  const file = process.env.E2E_SUMMARY_FILE;
  if (file) {
    appendFileSync(file, JSON.stringify(entry) + '\n');
  }
}

export function recordScenario(name: string, counts: { addressesLost?: number } = {}): void {
  record({ kind: 'scenario', name, addressesLost: counts.addressesLost ?? 0 });
}

export function recordFault(name: string): void {
  record({ kind: 'fault', name });
}

export function summaryTable(file: string): string {
  const entries: Entry[] = existsSync(file)
    ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Entry)
    : [];
  const scenarios = entries.filter((e) => e.kind === 'scenario');
  const faults = entries.filter((e) => e.kind === 'fault');
  const lost = scenarios.reduce((n, e) => n + (e.addressesLost ?? 0), 0);
  return [
    '',
    'e2e summary',
    `  scenarios passed   ${scenarios.length}`,
    `  faults injected    ${faults.length}`,
    `  addresses lost     ${lost}`,
    ...scenarios.map((s) => `    ✓ ${s.name}`),
    ...faults.map((f) => `    ⚡ ${f.name}`),
    '',
  ].join('\n');
}

/** A test whose passing counts as one scenario in the closing table. */
export function scenarioTest(it: (name: string, fn: () => Promise<void>, timeout?: number) => void) {
  return (name: string, fn: () => void | Promise<void>, timeout?: number) =>
    it(
      name,
      async () => {
        await fn();
        recordScenario(name);
      },
      timeout,
    );
}

/**
 * For a suite whose tests are not scenarioTests: each test that passes counts
 * as a scenario named `<prefix>: <test name>`. Call once at the top of the file.
 */
export function recordPassedTests(beforeEach: (fn: (context: { onTestFinished: (fn: (context: { task: { name: string; result?: { state?: string } } }) => void) => void }) => void) => void, prefix: string): void {
  beforeEach(({ onTestFinished }) =>
    onTestFinished(({ task }) => {
      if (task.result?.state === 'pass') {
        recordScenario(`${prefix}: ${task.name}`);
      }
    }),
  );
}
