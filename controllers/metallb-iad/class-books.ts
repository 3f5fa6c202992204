/**
 * A class's books (docs/driver.md, "The class"): per family, how many
 * addresses its ranges hold, how many are recorded and in which phase, and
 * how many MetalLB can still hand out. Pure: the class status and the metrics
 * both read it.
 */
import type { IPAddress, IPAddressClass } from '../../api/v1alpha1/index.js';
import { canonicalIp, familyOf, rangeContains, type Family, type IpRange } from '../../api/ip.js';
import { parseClassParameters } from './class-parameters.js';
import type { DriverStore } from './store.js';

export const COUNTED_PHASES = ['Available', 'Bound', 'Released', 'Conflict', 'Lost', 'Pending'] as const;
export type CountedPhase = (typeof COUNTED_PHASES)[number];

export interface FamilyBooks {
  readonly family: Family;
  /** Addresses the class's ranges hold (a union: ranges that overlap count once). */
  readonly capacity: bigint;
  /** Recorded IPAddresses of this family, whatever their phase. */
  readonly recorded: number;
  readonly phases: Readonly<Record<CountedPhase, number>>;
  /** Addresses held by a placeholder, and associated with a Service. */
  readonly held: number;
  readonly attached: number;
  /** What MetalLB can still hand out: capacity less what is recorded. */
  readonly free: bigint;
}

function rangesOf(ranges: readonly IpRange[], family: Family): IpRange[] {
  return ranges.filter((r) => (r.family === 4 ? 'IPv4' : 'IPv6') === family);
}

/** The size of the union of ranges of one family. */
export function capacityOf(ranges: readonly IpRange[]): bigint {
  const sorted = [...ranges].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  let total = 0n;
  let end = -1n;
  for (const range of sorted) {
    const first = range.first > end ? range.first : end + 1n;
    if (range.last >= first) {
      total += range.last - first + 1n;
      end = range.last;
    }
  }
  return total;
}

/**
 * The books of one class from its parsed ranges and its recorded addresses.
 * `isHeld` says whether a placeholder holds an address (the caller's index).
 * A family appears when the ranges or the records have it.
 */
export function classBooks(ranges: readonly IpRange[], addresses: readonly IPAddress[], isHeld: (address: IPAddress) => boolean): FamilyBooks[] {
  const books: FamilyBooks[] = [];
  for (const family of ['IPv4', 'IPv6'] as const) {
    const mine = addresses.filter((a) => familyOf(a.spec.address) === family && !a.metadata.deletionTimestamp);
    const own = rangesOf(ranges, family);
    if (own.length === 0 && mine.length === 0) {
      continue;
    }
    const phases = Object.fromEntries(COUNTED_PHASES.map((p) => [p, 0])) as Record<CountedPhase, number>;
    for (const address of mine) {
      const phase = (address.status?.phase ?? 'Pending') as CountedPhase;
      phases[COUNTED_PHASES.includes(phase) ? phase : 'Pending'] += 1;
    }
    const capacity = capacityOf(own);
    // A Lost address no longer lies in the ranges: it takes nothing from what MetalLB can hand out;
    // a duplicate takes nothing more than its IP's own address does (IPs are counted, not objects).
    const inside = new Set(mine.filter((a) => own.some((r) => rangeContains(r, a.spec.address))).map((a) => canonicalIp(a.spec.address)));
    const free = capacity - BigInt(inside.size);
    books.push({
      family,
      capacity,
      recorded: mine.length,
      phases,
      held: mine.filter(isHeld).length,
      attached: mine.filter((a) => a.status?.associatedTo !== undefined).length,
      free: free > 0n ? free : 0n,
    });
  }
  return books;
}

/**
 * A class's books from the caches (its parameters' ranges, its recorded
 * addresses, their holds); undefined where the parameters give no ranges.
 * The class status, the metrics and the claim pass all read it from here.
 */
export function classBooksOf(store: Pick<DriverStore, 'addressesOfClass' | 'placeholdersOf' | 'poolNamed'>, ipClass: IPAddressClass): FamilyBooks[] | undefined {
  const parameters = parseClassParameters(ipClass, (pool) => store.poolNamed(pool));
  if (!parameters.ok) {
    return undefined;
  }
  return classBooks(parameters.ranges, store.addressesOfClass(ipClass.metadata.name!), (a) => store.placeholdersOf(a.metadata.name!).length > 0);
}

/**
 * Whether MetalLB has nothing left of this family to hand out in the class
 * (its books' `free` is 0). The books walk every address of the class, about
 * 20 ms at 10,000, and every waiting claim's pass asks: they are counted only
 * when the class records at least as many addresses as the family's ranges
 * hold, the one case in which it can be full.
 */
export function familyExhausted(store: Pick<DriverStore, 'addressesOfClass' | 'poolNamed'>, ipClass: IPAddressClass, family: Family): boolean {
  const parameters = parseClassParameters(ipClass, (pool) => store.poolNamed(pool));
  if (!parameters.ok) {
    return false;
  }
  const capacity = capacityOf(rangesOf(parameters.ranges, family));
  const addresses = store.addressesOfClass(ipClass.metadata.name!);
  if (BigInt(addresses.length) < capacity) {
    return false; // fewer records than room: some of this family is free, whatever the records' families
  }
  const books = classBooks(parameters.ranges, addresses, () => false);
  return (books.find((b) => b.family === family)?.free ?? 0n) === 0n;
}
