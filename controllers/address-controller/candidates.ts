/**
 * Matchable addresses indexed by class and family, each bucket kept sorted by
 * name, so choosing the lexicographically smallest candidate is a lookup, not
 * a scan of every address.
 */
import type { IPAddress } from '../../api/v1alpha1/index.js';
import { isCandidate } from './decisions.js';
import { familyOf, type Family } from '../../api/ip.js';

export class CandidateIndex {
  private readonly buckets = new Map<string, string[]>();
  private readonly placed = new Map<string, string>();

  /** Reflects an added or changed address. */
  upsert(address: IPAddress): void {
    const name = address.metadata.name!;
    this.remove(name);
    const family = familyOf(address.spec.address);
    if (!family || !isCandidate(address, address.spec.className, family)) {
      return;
    }
    const bucketKey = key(address.spec.className, family);
    const bucket = this.buckets.get(bucketKey) ?? [];
    bucket.splice(lowerBound(bucket, name), 0, name);
    this.buckets.set(bucketKey, bucket);
    this.placed.set(name, bucketKey);
  }

  remove(name: string): void {
    const bucketKey = this.placed.get(name);
    if (!bucketKey) {
      return;
    }
    const bucket = this.buckets.get(bucketKey)!;
    const at = lowerBound(bucket, name);
    if (bucket[at] === name) {
      bucket.splice(at, 1);
    }
    this.placed.delete(name);
  }

  /** The smallest candidate name for the class and family, skipping `exclude`. */
  first(className: string, family: Family, exclude: ReadonlySet<string> = new Set()): string | undefined {
    const bucket = this.buckets.get(key(className, family));
    return bucket?.find((name) => !exclude.has(name));
  }

  size(className: string, family: Family): number {
    return this.buckets.get(key(className, family))?.length ?? 0;
  }
}

function key(className: string, family: Family): string {
  return `${className}\u0000${family}`;
}

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
