/** The bench's targets: each figure against its bound, a table at the end, exit 1 on a miss. */
interface Row {
  readonly name: string;
  readonly value?: number;
  readonly bound?: string;
  readonly met?: boolean;
  readonly note?: string;
}

export class Targets {
  private readonly rows: Row[] = [];

  atLeast(name: string, value: number, target: number): void {
    this.rows.push({ name, value, bound: `≥ ${target}`, met: value >= target });
  }

  atMost(name: string, value: number, target: number): void {
    this.rows.push({ name, value, bound: `≤ ${target}`, met: value <= target });
  }

  skipped(name: string, why: string): void {
    this.rows.push({ name, note: `skipped: ${why}` });
  }

  /** Prints the table; returns the exit code: 1 if any target was missed. */
  report(out: NodeJS.WritableStream = process.stdout): number {
    out.write('targets:\n');
    for (const row of this.rows) {
      out.write(
        row.note
          ? `  -    ${row.name}: ${row.note}\n`
          : `  ${row.met ? 'ok  ' : 'MISS'} ${row.name}: ${row.value!.toFixed(2)} (target ${row.bound})\n`,
      );
    }
    return this.rows.some((r) => r.met === false) ? 1 : 0;
  }
}
