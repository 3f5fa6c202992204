/** e2e global setup: helm resolved once, and the closing summary table printed after every suite. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveHelm } from '../../hack/helm.js';
import { summaryTable } from './support/summary.js';

export default function setup(): () => void {
  process.env.HELM = resolveHelm();
  const dir = mkdtempSync(join(tmpdir(), 'e2e-summary-'));
  const file = join(dir, 'entries.jsonl');
  process.env.E2E_SUMMARY_FILE = file;
  return () => {
    process.stdout.write(summaryTable(file));
    rmSync(dir, { recursive: true, force: true });
  };
}
