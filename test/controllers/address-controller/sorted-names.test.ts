import { describe, expect, it } from 'vitest';
import { SortedNames } from '../../../controllers/address-controller/sorted-names.js';

/** A small deterministic generator, so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}

describe('SortedNames', () => {
  it('agrees with a sorted array through 20,000 random adds and deletes (chunks split and empty)', () => {
    const next = random(7);
    const names = new SortedNames();
    const model = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const name = `ip-${Math.floor(next() * 3_000)}`;
      if (next() < 0.6) {
        expect(names.add(name)).toBe(!model.has(name));
        model.add(name);
      } else {
        expect(names.delete(name)).toBe(model.has(name));
        model.delete(name);
      }
      if (i % 997 === 0) {
        expect([...names]).toEqual([...model].sort());
      }
    }
    expect([...names]).toEqual([...model].sort());
    expect(names.size).toBe(model.size);
    const smallest = [...model].sort()[0];
    expect(names.first()).toBe(smallest);
    expect(names.has(smallest!)).toBe(true);
  });

  it('first() skips the excluded names in order', () => {
    const names = new SortedNames();
    for (const n of ['c', 'a', 'b']) names.add(n);
    expect(names.first(new Set(['a']))).toBe('b');
    expect(names.first(new Set(['a', 'b', 'c']))).toBeUndefined();
    expect(new SortedNames().first()).toBeUndefined();
  });

  it('a name smaller than every chunk head goes first; deleting an absent name changes nothing', () => {
    const names = new SortedNames();
    for (let i = 1000; i < 3000; i++) names.add(`n${i}`);
    names.add('a');
    expect(names.first()).toBe('a');
    expect(names.delete('0')).toBe(false);
    expect(names.delete('zzz')).toBe(false);
    expect(names.size).toBe(2001);
  });
});
