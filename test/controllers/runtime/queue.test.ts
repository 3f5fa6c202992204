import { describe, expect, it, vi } from 'vitest';
import { WorkQueue } from '../../../controllers/runtime/queue.js';

describe('WorkQueue', () => {
  it('deduplicates keys added before they are processed', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.length).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
  });

  it('re-queues a key added while it is processing, once, after done()', async () => {
    const q = new WorkQueue();
    q.add('a');
    const key = await q.get();
    q.add('a');
    q.add('a');
    expect(q.length).toBe(0);
    q.done(key!);
    expect(q.length).toBe(1);
    expect(await q.get()).toBe('a');
  });

  it('backs off per item, 5 ms doubling to 1000 s, and forgets on success', () => {
    const q = new WorkQueue();
    expect([0, 1, 2, 3].map((n) => q.backoff(n))).toEqual([5, 10, 20, 40]);
    expect(q.backoff(30)).toBe(1_000_000);
    q.addRateLimited('a');
    q.addRateLimited('a');
    expect(q.numRequeues('a')).toBe(2);
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
  });

  it('delivers a rate-limited key after its delay', async () => {
    vi.useFakeTimers();
    try {
      const q = new WorkQueue();
      q.addRateLimited('a');
      expect(q.length).toBe(0);
      vi.advanceTimersByTime(5);
      expect(q.length).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('hands a key straight to a waiting worker, and ends workers on shutdown', async () => {
    const q = new WorkQueue();
    const waiting = q.get();
    q.add('x');
    expect(await waiting).toBe('x');
    const idle = q.get();
    q.shutDown();
    expect(await idle).toBeUndefined();
    q.add('y');
    expect(await q.get()).toBeUndefined();
  });

  it('drains queued keys after shutdown before ending', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.shutDown();
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBeUndefined();
  });
});
