/**
 * A seeded PRNG (mulberry32): the same seed gives the same operations on any
 * machine and Node version, which Math.random cannot promise.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    // mulberry32 (Tommy Ettinger): 32 bits of state, full period, good enough for test choices.
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) {
      throw new Error('pick from nothing');
    }
    return items[this.int(items.length)]!;
  }

  /** One of the entries, in proportion to its weight; entries of weight 0 are never chosen. */
  weighted<T>(entries: readonly (readonly [T, number])[]): T {
    const total = entries.reduce((sum, [, w]) => sum + w, 0);
    let r = this.next() * total;
    for (const [value, weight] of entries) {
      if (weight > 0 && (r -= weight) < 0) {
        return value;
      }
    }
    // Float rounding can leave r at exactly 0 after the last entry: take the last weighted one.
    return entries.filter(([, w]) => w > 0).at(-1)![0];
  }
}
