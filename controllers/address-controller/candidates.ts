/**
 * Matchable addresses indexed by class and family, each bucket kept sorted by
 * name (sorted-names.ts), so choosing the lexicographically smallest candidate
 * is a lookup, not a scan, and taking it stays cheap at a million addresses.
 */
import type { IPAddress } from '../../api/v1alpha1/index.js';
import { isCandidate } from './decisions.js';
import { familyOf, type Family } from '../../api/ip.js';
import { SortedNames } from './sorted-names.js';

export class CandidateIndex {
  private readonly buckets = new Map<string, SortedNames>();
  private readonly placed = new Map<string, string>();

  /**
   * Reflects an added or changed address. A duplicate (another IPAddress has its
   * IP first) is never a candidate, whatever its phase says yet.
   */
  upsert(address: IPAddress, duplicate = false): void {
    const name = address.metadata.name!;
    const family = familyOf(address.spec.address);
    const bucketKey = !duplicate && family && isCandidate(address, address.spec.className, family) ? key(address.spec.className, family) : undefined;
    if (this.placed.get(name) === bucketKey) {
      return;
    }
    this.remove(name);
    if (!bucketKey) {
      return;
    }
    let bucket = this.buckets.get(bucketKey);
    if (!bucket) {
      bucket = new SortedNames();
      this.buckets.set(bucketKey, bucket);
    }
    bucket.add(name);
    this.placed.set(name, bucketKey);
  }

  remove(name: string): void {
    const bucketKey = this.placed.get(name);
    if (!bucketKey) {
      return;
    }
    const bucket = this.buckets.get(bucketKey)!;
    bucket.delete(name);
    if (bucket.size === 0) {
      this.buckets.delete(bucketKey);
    }
    this.placed.delete(name);
  }

  /** The smallest candidate name for the class and family, skipping `exclude`. */
  first(className: string, family: Family, exclude?: ReadonlySet<string>): string | undefined {
    return this.buckets.get(key(className, family))?.first(exclude);
  }

  size(className: string, family: Family): number {
    return this.buckets.get(key(className, family))?.size ?? 0;
  }
}

function key(className: string, family: Family): string {
  return `${className}\u0000${family}`;
}
