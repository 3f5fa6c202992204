/**
 * What a served class asks for: its own ranges (`spec.parameters.addresses`), or an existing
 * IPAddressPool it takes over (`spec.parameters.pool`, docs/adoption.md); and whether an address
 * still lies in it.
 */
import { precedes, type IPAddress, type IPAddressClass } from '../../api/v1alpha1/index.js';
import { isDnsLabel, isDnsSubdomain } from '../../api/names.js';
import { parseRange, rangeContains, rangesOverlap, type IpRange } from '../../api/ip.js';
import { poolName } from './names.js';
import type { MetallbObject } from './store.js';
import { DRIVER, SERVED_BY_CLASS_ANNOTATION } from './well-known.js';

/**
 * How MetalLB announces a class's addresses (`spec.parameters.advertisement`):
 * by ARP/NDP on the nodes' segment (L2, the default), or by BGP to the
 * admin's BGPPeers, with the fields of MetalLB's BGPAdvertisement.
 */
export type Advertisement =
  | { readonly type: 'L2' }
  | {
      readonly type: 'BGP';
      readonly aggregationLength?: number;
      readonly aggregationLengthV6?: number;
      readonly localPref?: number;
      readonly communities?: readonly string[];
      /** BGPPeer names (the admin's objects); none: every peer. */
      readonly peers?: readonly string[];
    };

export type ClassParameters =
  | { readonly ok: true; readonly addresses: string[]; readonly ranges: IpRange[]; readonly adoptedPool?: string; readonly advertisement: Advertisement }
  | { readonly ok: false; readonly message: string };

/** Looks an IPAddressPool up by name in MetalLB's namespace. */
export type PoolLookup = (name: string) => MetallbObject | undefined;

interface Parameters {
  readonly addresses?: unknown;
  readonly pool?: unknown;
  readonly advertisement?: unknown;
}

/**
 * `spec.parameters.addresses`, a non-empty list of CIDRs or MetalLB ranges; or
 * `spec.parameters.pool`, the name of an IPAddressPool in MetalLB's namespace
 * whose addresses the class comes to serve (read through `pools`); unknown keys
 * are ignored.
 */
export function parseClassParameters(ipClass: IPAddressClass, pools?: PoolLookup): ClassParameters {
  const parameters = ipClass.spec.parameters as Parameters | undefined;
  if (!parameters || typeof parameters !== 'object') {
    return { ok: false, message: 'class has no parameters; this driver requires parameters.addresses or parameters.pool' };
  }
  const ranges = parameters.pool !== undefined ? adoptedPoolParameters(ipClass, parameters, pools) : ownRanges(parameters.addresses);
  if (!ranges.ok) {
    return ranges;
  }
  const advertisement = parseAdvertisement(parameters.advertisement, ranges.ranges, rangesField(ranges));
  return typeof advertisement === 'string' ? { ok: false, message: advertisement } : { ...ranges, advertisement };
}

type Ranges = { readonly ok: true; readonly addresses: string[]; readonly ranges: IpRange[]; readonly adoptedPool?: string } | { readonly ok: false; readonly message: string };

function ownRanges(list: unknown): Ranges {
  const parsed = parseAddresses(list, 'parameters.addresses');
  return typeof parsed === 'string' ? { ok: false, message: parsed } : { ok: true, ...parsed };
}

/** MetalLB's BGPAdvertisement fields a class may set; anything else under advertisement is refused, not ignored. */
const BGP_FIELDS = ['type', 'aggregationLength', 'aggregationLengthV6', 'localPref', 'communities', 'peers'];

/**
 * `parameters.advertisement`: absent or `{type: L2}`, or `{type: BGP, ...}`
 * checked as MetalLB v0.16.1 checks a BGPAdvertisement (internal/config/config.go,
 * bgpAdvertisementFromCR and validateBGPAdvPerPool; internal/bgp/community): a
 * configuration it refuses stops it applying any change, for every class, so
 * the class is refused here first. A message naming the field when it is wrong.
 */
export function parseAdvertisement(value: unknown, ranges: readonly IpRange[], rangesFieldName = 'parameters.addresses'): Advertisement | string {
  const field = 'parameters.advertisement';
  if (value === undefined) {
    return { type: 'L2' };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return `${field} must be an object with type L2 or BGP`;
  }
  const a = value as Record<string, unknown>;
  if (a.type === 'L2') {
    const extra = Object.keys(a).filter((k) => k !== 'type');
    return extra.length ? `${field}.${extra[0]} applies to type BGP only` : { type: 'L2' };
  }
  if (a.type !== 'BGP') {
    return `${field}.type must be L2 or BGP, got ${JSON.stringify(a.type)}`;
  }
  const unknown = Object.keys(a).filter((k) => !BGP_FIELDS.includes(k));
  if (unknown.length) {
    return `${field}.${unknown[0]} is not a field of a BGP advertisement (${BGP_FIELDS.slice(1).join(', ')})`;
  }
  const integer = (key: string, min: number, max: number): number | undefined | string => {
    const v = a[key];
    if (v === undefined) return undefined;
    return Number.isInteger(v) && (v as number) >= min && (v as number) <= max ? (v as number) : `${field}.${key} must be an integer ${min}-${max}, got ${JSON.stringify(v)}`;
  };
  const aggregationLength = integer('aggregationLength', 0, 32);
  const aggregationLengthV6 = integer('aggregationLengthV6', 0, 128);
  const localPref = integer('localPref', 0, 4294967295);
  for (const v of [aggregationLength, aggregationLengthV6, localPref]) {
    if (typeof v === 'string') return v;
  }
  const list = (key: string, valid: (s: string) => string | undefined): readonly string[] | undefined | string => {
    const v = a[key];
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.some((e) => typeof e !== 'string')) return `${field}.${key} must be a list of strings`;
    for (const [i, e] of (v as string[]).entries()) {
      const problem = valid(e);
      if (problem) return `${field}.${key}[${i}] ${JSON.stringify(e)}: ${problem}`;
      if ((v as string[]).indexOf(e) !== i) return `${field}.${key}[${i}] ${JSON.stringify(e)} is listed twice (MetalLB refuses duplicates)`;
    }
    return v as string[];
  };
  const communities = list('communities', communityProblem);
  const peers = list('peers', (p) => (isDnsSubdomain(p) ? undefined : 'is not the name of a BGPPeer'));
  for (const v of [communities, peers]) {
    if (typeof v === 'string') return v;
  }
  // MetalLB: an aggregation length shorter than a range's own prefix would announce addresses outside it.
  for (const range of ranges) {
    const length = range.family === 4 ? ((aggregationLength as number | undefined) ?? 32) : ((aggregationLengthV6 as number | undefined) ?? 128);
    const lowest = Math.min(...coverPrefixes(range));
    if (length < lowest) {
      const key = range.family === 4 ? 'aggregationLength' : 'aggregationLengthV6';
      return `${field}.${key} ${length} is shorter than the /${lowest} of ${rangesFieldName}: MetalLB refuses an aggregation wider than the pool's own prefixes`;
    }
  }
  return {
    type: 'BGP',
    ...(aggregationLength !== undefined ? { aggregationLength: aggregationLength as number } : {}),
    ...(aggregationLengthV6 !== undefined ? { aggregationLengthV6: aggregationLengthV6 as number } : {}),
    ...(localPref !== undefined ? { localPref: localPref as number } : {}),
    ...(communities !== undefined ? { communities: communities as readonly string[] } : {}),
    ...(peers !== undefined ? { peers: peers as readonly string[] } : {}),
  };
}

/**
 * Why MetalLB would refuse a community, as internal/bgp/community New parses it:
 * `<uint16>:<uint16>`, or `large:<uint32>:<uint32>:<uint32>`. (A name of a Community
 * object MetalLB also accepts; the driver does not read those, so it asks for values.)
 */
function communityProblem(c: string): string | undefined {
  const parts = c.split(':');
  const fits = (text: string, max: number) => /^\d+$/.test(text) && Number(text) <= max;
  if (parts.length === 2) {
    return parts.every((p) => fits(p, 65535)) ? undefined : 'a community is <0-65535>:<0-65535>';
  }
  if (parts.length === 4 && parts[0] === 'large') {
    return parts.slice(1).every((p) => fits(p, 4294967295)) ? undefined : 'a large community is large:<uint32>:<uint32>:<uint32>';
  }
  return 'a community is <0-65535>:<0-65535> or large:<uint32>:<uint32>:<uint32>';
}

/** The prefix lengths of the fewest CIDRs that cover a range exactly (MetalLB splits a-b ranges so). */
export function coverPrefixes(range: IpRange): number[] {
  const width = range.family === 4 ? 32 : 128;
  const prefixes: number[] = [];
  let first = range.first;
  while (first <= range.last) {
    let bits = 0;
    // The largest block aligned at `first` that stays inside the range.
    while (bits < width && first % (1n << BigInt(bits + 1)) === 0n && first + (1n << BigInt(bits + 1)) - 1n <= range.last) {
      bits++;
    }
    prefixes.push(width - bits);
    first += 1n << BigInt(bits);
  }
  return prefixes;
}

function adoptedPoolParameters(ipClass: IPAddressClass, parameters: Parameters, pools: PoolLookup | undefined): Ranges {
  const name = parameters.pool;
  if (parameters.addresses !== undefined) {
    return { ok: false, message: 'set parameters.addresses or parameters.pool, not both' };
  }
  if (typeof name !== 'string' || !isDnsLabel(name)) {
    return { ok: false, message: `parameters.pool must name an IPAddressPool, got ${JSON.stringify(name)}` };
  }
  const pool = pools?.(name);
  if (!pool) {
    return { ok: false, message: `parameters.pool: IPAddressPool ${name} not found in MetalLB's namespace` };
  }
  const owner = (pool.metadata.ownerReferences ?? []).find((o) => o.kind === 'IPAddressClass');
  if (owner) {
    return { ok: false, message: `parameters.pool: IPAddressPool ${name} is the pool of IPAddressClass ${owner.name}` };
  }
  const servedBy = pool.metadata.annotations?.[SERVED_BY_CLASS_ANNOTATION];
  if (servedBy && servedBy !== ipClass.metadata.name) {
    return { ok: false, message: `parameters.pool: IPAddressPool ${name} is served by IPAddressClass ${servedBy} already` };
  }
  const parsed = parseAddresses(pool.spec?.addresses, `IPAddressPool ${name} spec.addresses`);
  return typeof parsed === 'string' ? { ok: false, message: parsed } : { ok: true, ...parsed, adoptedPool: name };
}

function parseAddresses(list: unknown, field: string): { addresses: string[]; ranges: IpRange[] } | string {
  if (!Array.isArray(list)) {
    return `${field} must be a list of CIDRs or ranges`;
  }
  if (list.length === 0) {
    return `${field} names no addresses`;
  }
  const ranges: IpRange[] = [];
  for (const [i, entry] of list.entries()) {
    if (typeof entry !== 'string') {
      return `${field}[${i}] must be a string, got ${JSON.stringify(entry)}`;
    }
    const range = parseRange(entry);
    if (typeof range === 'string') {
      return `${field}[${i}]: ${range}`;
    }
    ranges.push(range);
  }
  return { addresses: list as string[], ranges };
}

/**
 * The IPAddressPool a class's reservations live in: the pool it took over, or
 * the one it renders (`iad-<class>`). Placeholders ask for it by name.
 */
export function backingPoolName(ipClass: IPAddressClass): string {
  const pool = (ipClass.spec.parameters as Parameters | undefined)?.pool;
  return typeof pool === 'string' && pool ? pool : poolName(ipClass.metadata.name!);
}

export function servedBy(ipClass: IPAddressClass | undefined): boolean {
  return ipClass?.spec.provisioner === DRIVER;
}

/** Whether the address's backing reservation exists: its IP lies in the class's pool. */
export function reservationExists(address: IPAddress, pool: { spec?: { addresses?: string[] } } | undefined): boolean {
  if (!pool) {
    return false;
  }
  return (pool.spec?.addresses ?? []).some((text) => {
    const range = parseRange(text);
    return typeof range !== 'string' && rangeContains(range, address.spec.address);
  });
}

/** One entry of a class's list of ranges: its place in the list, its text, what it spans. */
export interface RangeEntry {
  readonly index: number;
  readonly text: string;
  readonly range: IpRange;
}

/**
 * The first two entries of one class's list that share an address (identical
 * entries, a CIDR inside another, a range across a CIDR), in list order; none
 * when they are disjoint. MetalLB refuses a pool whose own entries overlap and
 * then applies no configuration at all, so such a list is never written.
 */
export function overlappingEntries(addresses: readonly string[], ranges: readonly IpRange[]): readonly [RangeEntry, RangeEntry] | undefined {
  for (let i = 0; i < ranges.length; i++) {
    for (let j = i + 1; j < ranges.length; j++) {
      if (rangesOverlap(ranges[i]!, ranges[j]!)) {
        return [
          { index: i, text: addresses[i]!, range: ranges[i]! },
          { index: j, text: addresses[j]!, range: ranges[j]! },
        ];
      }
    }
  }
  return undefined;
}

/** Where the class's ranges come from, as a message names it: its parameters, or the pool it takes over. */
export function rangesField(parameters: { readonly adoptedPool?: string }): string {
  return parameters.adoptedPool ? `IPAddressPool ${parameters.adoptedPool} spec.addresses` : 'parameters.addresses';
}

/** The refusal of a list whose own entries overlap, naming both. */
export function overlappingEntriesMessage(field: string, [a, b]: readonly [RangeEntry, RangeEntry]): string {
  return (
    `${field}[${a.index}] ${JSON.stringify(a.text)} and ${field}[${b.index}] ${JSON.stringify(b.text)} overlap; ` +
    'MetalLB would refuse the pool and stop applying any configuration, so no pool is written'
  );
}

/** The entries of a class's parsed parameters, in list order. */
export function desiredEntries(parameters: { readonly addresses: readonly string[]; readonly ranges: readonly IpRange[] }): RangeEntry[] {
  return parameters.ranges.map((range, index) => ({ index, text: parameters.addresses[index]!, range }));
}

/** The entries of a list (as written: a pool's, where an entry may not parse, which then spans nothing). */
export function rangeEntries(addresses: readonly string[] | undefined): RangeEntry[] {
  return (addresses ?? []).flatMap((text, index) => {
    const range = parseRange(text);
    return typeof range === 'string' ? [] : [{ index, text, range }];
  });
}

/** The entries of `mine` that share an address with any of `theirs`. */
export function entriesOverlapping(mine: readonly RangeEntry[], theirs: readonly RangeEntry[]): RangeEntry[] {
  return mine.filter((m) => theirs.some((t) => rangesOverlap(m.range, t.range)));
}

/** One side of an overlap between two served classes: the class, the ranges it asks for, and its pool as MetalLB has it now. */
export interface OverlapSide {
  readonly ipClass: IPAddressClass;
  readonly desired: readonly RangeEntry[];
  /** The entries of its pool as written (none while it has no pool). */
  readonly written: readonly RangeEntry[];
}

/**
 * Which of two classes whose desired ranges overlap keeps them (docs/driver.md,
 * "The class"): the one whose pool as written already holds part of the
 * other's ranges, if only one does (a class with bound addresses has such a
 * pool, so it never loses them to a newcomer or to another class's edit);
 * otherwise the older. The same answer from either side, whatever the order
 * of the passes.
 */
export function overlapKeeper(mine: OverlapSide, theirs: OverlapSide): { readonly keeper: 'mine' | 'theirs'; readonly holds: boolean } {
  const mineHolds = entriesOverlapping(mine.written, theirs.desired).length > 0;
  const theirsHolds = entriesOverlapping(theirs.written, mine.desired).length > 0;
  if (mineHolds !== theirsHolds) {
    return { keeper: mineHolds ? 'mine' : 'theirs', holds: true };
  }
  return { keeper: precedes(mine.ipClass, theirs.ipClass) ? 'mine' : 'theirs', holds: mineHolds };
}
