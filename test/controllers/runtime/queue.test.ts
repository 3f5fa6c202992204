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

  it('counts rate-limited requeues per key and forgets on success', () => {
    const q = new WorkQueue();
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

  it('keeps the earliest ready time: a later, longer addAfter never postpones a pending shorter one', () => {
    vi.useFakeTimers();
    try {
      const q = new WorkQueue();
      q.addAfter('k', 50);
      q.addAfter('k', 60_000);
      vi.advanceTimersByTime(50);
      expect(q.length).toBe(1);
      // A shorter request does bring a pending longer one forward.
      q.addAfter('j', 60_000);
      q.addAfter('j', 10);
      vi.advanceTimersByTime(10);
      expect(q.length).toBe(2);
      vi.advanceTimersByTime(60_000);
      expect(q.length).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('rate-limits through the limiter it is given', () => {
    vi.useFakeTimers();
    try {
      const asked: string[] = [];
      const q = new WorkQueue({ rateLimiter: { when: (key) => (asked.push(key), 1_000), forget: () => {}, numRequeues: () => 7 } });
      q.addRateLimited('a');
      vi.advanceTimersByTime(999);
      expect(q.length).toBe(0);
      vi.advanceTimersByTime(1);
      expect(q.length).toBe(1);
      expect(asked).toEqual(['a']);
      expect(q.numRequeues('a')).toBe(7);
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
