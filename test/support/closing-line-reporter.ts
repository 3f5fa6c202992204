/**
 * Prints one plain closing line, `<label>: N passed, N failed[, N skipped]`,
 * after vitest's own summary: the shape CI reads to tell a run that tested
 * something from one that ran nothing. A file that failed to load, or an
 * unhandled error, counts as a failure.
 */
import type { Reporter, TestModule } from 'vitest/node';

export class ClosingLineReporter implements Reporter {
  constructor(private readonly label: string) {}

  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const module of modules) {
      let tests = 0;
      for (const test of module.children.allTests()) {
        tests++;
        const state = test.result().state;
        if (state === 'passed') {
          passed++;
        } else if (state === 'failed') {
          failed++;
        } else {
          skipped++;
        }
      }
      if (tests === 0 && module.state() === 'failed') {
        failed++;
      }
    }
    process.stdout.write(`\n${this.label}: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}
