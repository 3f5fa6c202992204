import { describe, expect, it } from 'vitest';
import { Controller } from '../../../controllers/runtime/controller.js';
import { silentLogger } from '../../../controllers/runtime/log.js';

/** Spins for `ms` without yielding: a pass that reads only caches and computes. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // computing
  }
}

describe('Controller workers', () => {
  it('step back to the event loop between keys, so a queue of passes without I/O does not starve timers and sockets', async () => {
    let reconciled = 0;
    const controller = new Controller('busy', async () => {
      busy(1);
      reconciled++;
    }, silentLogger);
    for (let i = 0; i < 200; i++) {
      controller.enqueue(`k-${i}`);
    }
    let seenByTimer: number | undefined;
    setTimeout(() => (seenByTimer = reconciled), 0);
    controller.start(8);
    await new Promise<void>((resolve) => {
      const check = () => (reconciled === 200 ? resolve() : setTimeout(check, 5));
      check();
    });
    await controller.stop();
    // The timer ran while keys were still queued, not after the last of them.
    expect(seenByTimer).toBeDefined();
    expect(seenByTimer!).toBeLessThan(50);
  });
});
