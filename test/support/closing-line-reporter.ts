/**
 * Prints one plain closing line, `<label>: N passed, N failed[, N skipped]`,
 * after vitest's own summary: the shape CI reads to tell a run that tested
 * something from one that ran nothing. A file that failed to load, or an
 * unhandled error, counts as a failure. Each failure is named above it, one
 * line each (file, test, the error's first line), so that a log cut down to
 * its end still says what failed.
 */
import type { Reporter, TestModule } from 'vitest/node';

export class ClosingLineReporter implements Reporter {
  constructor(private readonly label: string) {}

  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    const failures: string[] = unhandledErrors.map((e) => `unhandled error: ${firstLine(e)}`);
    for (const module of modules) {
      let tests = 0;
      for (const test of module.children.allTests()) {
        tests++;
        const state = test.result().state;
        if (state === 'passed') {
          passed++;
        } else if (state === 'failed') {
          failed++;
          failures.push(`${module.moduleId.replace(/^.*?(test\/)/, '$1')} > ${test.fullName}: ${firstLine(test.result().errors?.[0])}`);
        } else {
          skipped++;
        }
      }
      if (tests === 0 && module.state() === 'failed') {
        failed++;
        failures.push(`${module.moduleId.replace(/^.*?(test\/)/, '$1')}: ${firstLine(module.errors()[0])}`);
      }
    }
    const named = failures.map((f) => `FAILED ${f}\n`).join('');
    process.stdout.write(`\n${named}${this.label}: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}

/** An error's first line, whatever shape it came in. */
function firstLine(error: unknown): string {
  const message = error && typeof error === 'object' && 'message' in error ? String((error as { message: unknown }).message) : String(error);
  return message.split('\n')[0]!.slice(0, 300);
}
