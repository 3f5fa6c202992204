/** The closing table of an end-to-end run: scenarios passed, faults injected, addresses lost. */
const scenarios: string[] = [];
const faults: string[] = [];
let addressesLost = 0;

export function recordScenario(name: string, counts: { addressesLost?: number } = {}): void {
  scenarios.push(name);
  addressesLost += counts.addressesLost ?? 0;
}

export function recordFault(name: string): void {
  faults.push(name);
}

export function printSummary(): void {
  const rows = [
    ['scenarios passed', String(scenarios.length)],
    ['faults injected', String(faults.length)],
    ['addresses lost', String(addressesLost)],
  ];
  const lines = ['', 'e2e summary', ...rows.map(([k, v]) => `  ${k!.padEnd(18)} ${v}`), ...scenarios.map((s) => `    ✓ ${s}`), ...faults.map((f) => `    ⚡ ${f}`)];
  process.stdout.write(lines.join('\n') + '\n');
}
