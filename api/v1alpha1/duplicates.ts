/**
 * One IP, one IPAddress (docs/binding.md, "Duplicates"): of the IPAddresses
 * that name one IP, compared as an address (`::ffff:192.0.2.131` is
 * `192.0.2.131`), the earliest (creationTimestamp, then name) is the address
 * of that IP; every later one is a duplicate. A duplicate is never bound,
 * listed on a claim, held or handed out; it is `Conflict` with the condition
 * below naming the earlier one. Both controllers decide it here, from an index
 * keyed by `ipIndexKeys`.
 */
import { canonicalIp } from '../ip.js';
import type { IPAddress } from './types.js';

/** Name of the cache index of addresses by canonical IP; both controllers keep it. */
export const ADDRESS_BY_CANONICAL_IP = 'spec.address.canonical';

/** The key an address files under in ADDRESS_BY_CANONICAL_IP: its canonical IP, or none if it does not parse. */
export function ipIndexKeys(address: IPAddress): string[] {
  const ip = canonicalIp(address.spec.address);
  return ip === undefined ? [] : [ip];
}

/** The condition the core writes on every IPAddress: False while another IPAddress has its IP first. */
export const UNIQUE_CONDITION = 'Unique';
export const UNIQUE_REASON = { unique: 'Unique', duplicateIP: 'DuplicateIP' } as const;

/** What the order below reads of an object: its name and when it was created. */
interface Dated {
  readonly metadata: { readonly name?: string; readonly creationTimestamp?: Date | string };
}

const createdAt = (a: Dated) => {
  const t = new Date(a.metadata.creationTimestamp ?? '').getTime();
  return Number.isNaN(t) ? Number.POSITIVE_INFINITY : t;
};

/**
 * Whether `a` comes first: created earlier, then the smaller name (one not yet
 * stored, without a time, comes last). The stable order of every "the earlier
 * keeps it" rule: an IP's IPAddresses here, overlapping classes in the driver.
 */
export function precedes(a: Dated, b: Dated): boolean {
  const x = createdAt(a);
  const y = createdAt(b);
  return x !== y ? x < y : (a.metadata.name ?? '') < (b.metadata.name ?? '');
}

/**
 * The IPAddress that has this address's IP first, if this one is a duplicate;
 * undefined when it is the address of its IP (or alone, or no IP at all).
 * `sameIp` is every cached IPAddress filed under the same canonical IP
 * (this one included or not). One being deleted still counts: until it is
 * gone, its teardown may still be letting the IP go.
 */
export function duplicateOf(address: IPAddress, sameIp: readonly IPAddress[]): IPAddress | undefined {
  let first: IPAddress | undefined;
  for (const other of sameIp) {
    if (other.metadata.name === address.metadata.name) {
      continue;
    }
    if (precedes(other, address) && (!first || precedes(other, first))) {
      first = other;
    }
  }
  return first;
}
