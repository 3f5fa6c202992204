/** A history's report as text: what failed, how to run it again, and the last operations before it. */
import { formatViolation } from './invariants.js';
import type { HistoryEntry, HistoryReport } from './runner.js';
import { seconds } from './time.js';

/** How many history entries a report ends with. */
export const TAIL = 30;

export function failed(report: HistoryReport, leaks: readonly string[] = []): boolean {
  return report.violations.length > 0 || report.crashes.length > 0 || leaks.length > 0;
}

export interface FormatOptions {
  readonly leaks?: readonly string[];
  /** The command that runs the same history again. */
  readonly reproduce?: string;
  /** Also print, under each violation, this many history entries before it (a long soak's tail says little). */
  readonly beforeEachViolation?: number;
}

export function formatReport(report: HistoryReport, { leaks = [], reproduce, beforeEachViolation = 0 }: FormatOptions = {}): string {
  const planned = Number.isFinite(report.operationsPlanned) ? ` of ${report.operationsPlanned}` : '';
  const lines = [
    `seed ${report.seed}: ${report.operations}${planned} operations (${report.faults} faults), ${report.checks} checks, ` +
      `${report.violations.length} violation(s), ${report.crashes.length} crash(es), ${leaks.length} leak(s), ${seconds(report.wallMs)}` +
      (report.stoppedEarly ? `; ${report.stoppedEarly}` : ''),
  ];
  if (reproduce) {
    lines.push(`reproduce: ${reproduce}`);
  }
  const mix = Object.entries(report.mix).sort(([a], [b]) => (a < b ? -1 : 1));
  lines.push(`operations (accepted/ran): ${mix.map(([kind, { ran, ok }]) => `${kind} ${ok}/${ran}`).join(', ')}`);
  if (report.violations.length > 0) {
    lines.push('violations:');
    for (const v of report.violations) {
      lines.push(`  ${formatViolation(v)} [after operation ${v.afterOperation}, present for ${seconds(v.persistedMs)}]`);
      if (beforeEachViolation > 0) {
        lines.push(...report.history.slice(Math.max(0, v.historyLength - beforeEachViolation), v.historyLength).map((e) => `    ${formatEntry(e)}`));
      }
    }
  }
  for (const crash of report.crashes) {
    lines.push(`crash: ${crash}`);
  }
  for (const leak of leaks) {
    lines.push(`cleanup: ${leak}`);
  }
  const tail = report.history.slice(-TAIL);
  lines.push(`last ${tail.length} of ${report.history.length} history entries:`);
  lines.push(...tail.map((e) => `  ${formatEntry(e)}`));
  return lines.join('\n');
}

export const formatEntry = (e: HistoryEntry) => `${e.index > 0 ? `#${e.index}`.padStart(5) : 'check'} +${seconds(e.at).padStart(8)}  ${e.text}`;
