/**
 * A sorted set of strings kept as a list of short sorted chunks, with each
 * chunk's smallest element in a parallel array. Finding a name is two binary
 * searches (over chunk heads, then inside one chunk); inserting or removing
 * moves at most one chunk's worth of elements. A flat sorted array would move
 * up to n elements per change: 1.6 ms per claim at 1M addresses.
 *
 * Chunks split at MAX_CHUNK and empty chunks go; both touch the chunk arrays
 * (n / MAX_CHUNK entries), which happens once per ~MAX_CHUNK / 2 changes.
 */
const MAX_CHUNK = 512;

export class SortedNames {
  private readonly chunks: string[][] = [];
  /** heads[i] === chunks[i][0] */
  private readonly heads: string[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(name: string): boolean {
    if (this.chunks.length === 0) {
      this.chunks.push([name]);
      this.heads.push(name);
      this.count = 1;
      return true;
    }
    const c = Math.max(0, upperBound(this.heads, name) - 1);
    const chunk = this.chunks[c]!;
    const at = lowerBound(chunk, name);
    if (chunk[at] === name) {
      return false;
    }
    chunk.splice(at, 0, name);
    this.heads[c] = chunk[0]!;
    this.count++;
    if (chunk.length > MAX_CHUNK) {
      const upper = chunk.splice(MAX_CHUNK >>> 1);
      this.chunks.splice(c + 1, 0, upper);
      this.heads.splice(c + 1, 0, upper[0]!);
    }
    return true;
  }

  delete(name: string): boolean {
    const c = upperBound(this.heads, name) - 1;
    if (c < 0) {
      return false;
    }
    const chunk = this.chunks[c]!;
    const at = lowerBound(chunk, name);
    if (chunk[at] !== name) {
      return false;
    }
    chunk.splice(at, 1);
    this.count--;
    if (chunk.length === 0) {
      this.chunks.splice(c, 1);
      this.heads.splice(c, 1);
    } else {
      this.heads[c] = chunk[0]!;
    }
    return true;
  }

  has(name: string): boolean {
    const c = upperBound(this.heads, name) - 1;
    return c >= 0 && this.chunks[c]![lowerBound(this.chunks[c]!, name)] === name;
  }

  /** The smallest name not in `exclude`; visits only the excluded names before it. */
  first(exclude?: ReadonlySet<string>): string | undefined {
    for (const chunk of this.chunks) {
      for (const name of chunk) {
        if (!exclude?.has(name)) {
          return name;
        }
      }
    }
    return undefined;
  }

  *[Symbol.iterator](): IterableIterator<string> {
    for (const chunk of this.chunks) {
      yield* chunk;
    }
  }
}

/** First index whose element is >= value. */
function lowerBound(sorted: readonly string[], value: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < value) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/** First index whose element is > value. */
function upperBound(sorted: readonly string[], value: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! <= value) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}
