/**
 * The invariants a settled ledger keeps, judged on one snapshot (plus what
 * earlier snapshots showed Released). Pure and deterministic: the same
 * snapshots give the same violations, in the same order.
 *
 *   1  no IP is carried by two Services, unless they are all carriers of a Shared claim's address
 *      of that IP: tenant Services its status names (associatedTo, sharedWith)
 *   2  a Bound claim has exactly one address per requested family (none of another), each inside
 *      its class's ranges, and its status lists exactly those
 *   3  every recorded address (not being deleted, not Lost) is carried by its hold alone, or by
 *      exactly the tenant Services its status names (associatedTo, then sharedWith: several only
 *      for a Shared claim), each naming its claim, Bound to it
 *   4  no IP of a class is carried outside the books: a placeholder carries only the IP of the
 *      address it is linked to, any other Service only an address whose status names it among its
 *      carriers; the admin's hand-pinned Services are the one exception, and a theft must show as
 *      the address's Conflict (a Conflict with no thief is a violation too)
 *   5  a Released address stays Released, bound to the same (deleted) claim, and only its hold
 *      carries its IP
 *   6  no claim is left unbound while its class has room for every family it still misses
 *   7  nothing is left half-done: no claim or address stays mid-deletion or without a phase
 *      (the controllers keep up; a stalled one shows here first)
 *   8  one IP, one binding: of the IPAddresses of one IP (compared as an address, so
 *      ::ffff:a.b.c.d is a.b.c.d) the earliest (creationTimestamp, then name) is its address and
 *      every later one a duplicate, in Conflict, never Bound nor listed on a claim; no two of one
 *      IP are both out of Conflict or both listed, and no IP is listed by two claims
 *   9  MetalLB's pools never overlap, within one pool or between two (MetalLB would refuse its
 *      whole configuration): a class whose ranges overlap, its own or another's, gets no pool
 *  10  a spec edit of a claim (className, family, addressName) is refused with 422 naming the
 *      field: judged on the operation's outcome, not on a snapshot
 *  11  the association rule's carriers (docs/driver.md, "Association" and "Sharing"): among the
 *      Services naming a claim, those admitted (LoadBalancer, the claim Bound with its addresses
 *      recorded, the claim's class's loadBalancerClass, a family of the claim: exactly its family
 *      for a single-family claim) are judged in order. An Exclusive claim's are judged oldest first
 *      (creationTimestamp, then name): the first carries, every other is refused
 *      (AssociationRejected). A Shared claim's are judged first as its addresses' status names them
 *      (address by address as the claim's status.addresses lists them; associatedTo, then
 *      sharedWith), then the rest oldest first; each carries unless, on an address it would carry
 *      that a Service accepted before it carries too, the two have other backend keys
 *      (BackendMismatch) or serve one protocol and port (PortInUse). A carrier carries the claim's
 *      addresses of its families (its ingress lists them), each address's status names exactly its
 *      carriers, every other Service naming the claim carries nothing and has no pin of the
 *      driver's, and an address no carrier takes is associated with nothing
 *  12  a Dual claim's address of a family none of its carriers has (single-stack Services) stays
 *      held (its hold carries it) and no other Service carries it
 *  13  a Service whose loadBalancerClass is not its claim's class's carries nothing and has no pin
 *  14  the verdict says the rule: a Service naming a claim has the condition
 *      local.sdn.cozystack.io/Attached, True/Attached for a carrier, False with the refusal's
 *      reason otherwise (NotLoadBalancer, ClaimNotFound, ClaimNotBound, LoadBalancerClassMismatch,
 *      WrongFamily, AssociationRejected, PortInUse, BackendMismatch), and none when it names no
 *      claim; the claim's status.associatedTo names its first carrier in the judging order and
 *      status.sharedWith the others in that order (each absent when empty), and its Attached
 *      condition is True/Attached with a carrier, else False with the reason of the first Service
 *      naming it in the judging order, and absent when none names it
 *  15  a Bound claim's addresses never change while it stays Bound (one claim UID): a replace that
 *      dropped the driver's pin, a re-apply, a restart or a switch of Services gets the same IPs
 *
 * A duplicate holds no reservation (its IP is its address's): 3 and 4 do not judge it. An address's
 * carriers are judged as a set: the order they joined is history no snapshot shows (the claim's
 * order, which the judging order reads from it, is judged by 14).
 */
import { familyOf, parseRange, rangeContains, rangesOverlap, type Family, type IpRange } from '../../../../api/ip.js';
import { requestedFamilies } from '../../../../api/v1alpha1/index.js';
import { ordinal } from './order.js';
import type { Operation } from './operations.js';
import type { AddressView, ClaimView, ConditionView, HolderView, ServiceView, Snapshot } from './snapshot.js';
import { ADMIN_NAMESPACE, CLAIM_ATTACHED, SERVICE_ATTACHED, TENANTS } from './world.js';

export const INVARIANTS = {
  1: "one Service per IP, or a Shared claim's carriers its address names",
  2: 'a Bound claim has one address per family, inside its class',
  3: 'every recorded address is carried by its hold alone or by exactly the Services its status names',
  4: 'no class IP is carried outside the books (admin pins show as Conflict)',
  5: 'a Released address stays Released, carried only by its hold',
  6: 'no claim waits while its class has room',
  7: 'nothing is left half-done',
  8: 'one IP, one binding: a duplicate IPAddress is never Bound or listed',
  9: "MetalLB's pools never overlap",
  10: "a claim's spec edit is refused",
  11: "a claim's carriers by the rule (the oldest admitted; for a Shared claim each one MetalLB lets share) carry it, no other Service naming it carries anything",
  12: "a Dual claim's address of a family no carrier has stays held",
  13: "a Service of another loadBalancerClass than its claim's class carries nothing",
  14: "the Service's Attached condition and the claim's associatedTo, sharedWith and Attached say the rule's verdict",
  15: "a Bound claim's addresses never change",
} as const;
export type InvariantId = keyof typeof INVARIANTS;

export interface Violation {
  readonly invariant: InvariantId;
  /** The object at fault, e.g. `IPAddress ip-203-0-113-4` or `IPAddressClaim tenant-a/web`. */
  readonly object: string;
  readonly detail: string;
}

export const formatViolation = (v: Violation) => `invariant ${v.invariant} (${INVARIANTS[v.invariant]}): ${v.object}: ${v.detail}`;

/** What earlier snapshots showed Released, by the address's own UID (a re-created address is another). */
export class ReleasedMemory {
  private readonly seen = new Map<string, { name: string; claimUid?: string }>();

  /** Remembers every address Released in this snapshot and forgets those that are gone. */
  observe(snapshot: Snapshot): void {
    const live = new Set(snapshot.addresses.map((a) => a.uid));
    for (const uid of [...this.seen.keys()]) {
      if (!live.has(uid)) {
        this.seen.delete(uid);
      }
    }
    for (const a of snapshot.addresses) {
      if (a.phase === 'Released' && !this.seen.has(a.uid)) {
        this.seen.set(a.uid, { name: a.name, ...(a.claimRef?.uid ? { claimUid: a.claimRef.uid } : {}) });
      }
    }
  }

  get(uid: string): { name: string; claimUid?: string } | undefined {
    return this.seen.get(uid);
  }
}

/** The addresses each claim (by UID) was first seen Bound with. */
export class BoundMemory {
  private readonly seen = new Map<string, string>();

  /** Remembers the addresses of every claim Bound in this snapshot for the first time; forgets claims that are gone. */
  observe(snapshot: Snapshot): void {
    const live = new Set(snapshot.claims.map((c) => c.uid));
    for (const uid of [...this.seen.keys()]) {
      if (!live.has(uid)) {
        this.seen.delete(uid);
      }
    }
    for (const c of snapshot.claims) {
      if (c.phase === 'Bound' && !c.deleting && c.addresses.length > 0 && !this.seen.has(c.uid)) {
        this.seen.set(c.uid, c.addresses.join(', '));
      }
    }
  }

  get(uid: string): string | undefined {
    return this.seen.get(uid);
  }
}

const svcName = (s: Pick<ServiceView, 'namespace' | 'name'>) => `${s.namespace}/${s.name}`;
const addressObject = (a: AddressView) => `IPAddress ${a.name} (${a.ip})`;
const claimObject = (c: ClaimView) => `IPAddressClaim ${c.namespace}/${c.name} (uid ${c.uid.slice(0, 8)})`;

/** The workloads a status names as carrying: associatedTo first, then sharedWith. */
const holdersOf = (x: Pick<AddressView, 'associatedTo' | 'sharedWith'>): readonly HolderView[] => [...(x.associatedTo ? [x.associatedTo] : []), ...(x.sharedWith ?? [])];
const holderText = (h: HolderView) => `${h.kind} ${h.namespace}/${h.name}`;
const holdersText = (x: Pick<AddressView, 'associatedTo' | 'sharedWith'>) => holdersOf(x).map(holderText).join(', ') || 'nothing';
/** Whether the address's status names this Service among its carriers. */
const names = (a: AddressView, s: ServiceView) => holdersOf(a).some((h) => h.kind === 'Service' && h.namespace === s.namespace && h.name === s.name);

interface Ledger {
  readonly snapshot: Snapshot;
  readonly ranges: ReadonlyMap<string, readonly IpRange[]>;
  readonly carriers: ReadonlyMap<string, readonly ServiceView[]>;
  readonly addressByIp: ReadonlyMap<string, readonly AddressView[]>;
  readonly claimByUid: ReadonlyMap<string, ClaimView>;
  readonly claimByName: ReadonlyMap<string, ClaimView>;
  /** IPs the admin's hand-pinned Services carry. */
  readonly stolen: ReadonlySet<string>;
  /** Names of the IPAddresses that are not the address of their IP: a later one of the same IP. */
  readonly duplicates: ReadonlySet<string>;
}

/** Of two IPAddresses of one IP, the earlier (creationTimestamp, then name) first. */
const earlierFirst = (a: AddressView, b: AddressView) => ordinal(a.created, b.created) || ordinal(a.name, b.name);

function ledgerOf(snapshot: Snapshot): Ledger {
  const ranges = new Map<string, IpRange[]>();
  for (const c of snapshot.classes) {
    ranges.set(c.name, c.addresses.map(parseRange).filter((r): r is IpRange => typeof r !== 'string'));
  }
  const carriers = new Map<string, ServiceView[]>();
  for (const s of snapshot.services) {
    for (const ip of s.ingress) {
      carriers.set(ip, [...(carriers.get(ip) ?? []), s]);
    }
  }
  const addressByIp = new Map<string, AddressView[]>();
  for (const a of snapshot.addresses) {
    addressByIp.set(a.ip, [...(addressByIp.get(a.ip) ?? []), a]);
  }
  const stolen = new Set(snapshot.services.filter(isAdmin).flatMap((s) => s.ingress));
  const duplicates = new Set<string>();
  for (const [ip, same] of addressByIp) {
    if (familyOf(ip) && same.length > 1) {
      [...same].sort(earlierFirst).slice(1).forEach((a) => duplicates.add(a.name));
    }
  }
  return {
    snapshot,
    ranges,
    carriers,
    addressByIp,
    claimByUid: new Map(snapshot.claims.map((c) => [c.uid, c])),
    claimByName: new Map(snapshot.claims.map((c) => [`${c.namespace}/${c.name}`, c])),
    stolen,
    duplicates,
  };
}

const isAdmin = (s: ServiceView) => s.namespace === ADMIN_NAMESPACE;

/**
 * The claim an address is bound to: by claimRef UID; an empty UID (a driver's pre-binding) is
 * the live claim of that name (docs/binding.md).
 */
function claimOf(ledger: Ledger, a: AddressView): ClaimView | undefined {
  const ref = a.claimRef;
  if (!ref) {
    return undefined;
  }
  return ref.uid ? ledger.claimByUid.get(ref.uid) : ledger.claimByName.get(`${ref.namespace}/${ref.name}`);
}

const inRanges = (ranges: readonly IpRange[] | undefined, ip: string) => (ranges ?? []).some((r) => rangeContains(r, ip));
const inAnyClass = (ledger: Ledger, ip: string) => [...ledger.ranges.values()].some((r) => inRanges(r, ip));

export function checkInvariants(snapshot: Snapshot, released: ReleasedMemory, bound: BoundMemory = new BoundMemory()): Violation[] {
  const ledger = ledgerOf(snapshot);
  const rule = ruleOf(ledger);
  return [
    ...oneCarrierPerIp(ledger),
    ...boundClaims(ledger),
    ...carriedOnce(ledger),
    ...noneOutsideBooks(ledger),
    ...releasedStays(ledger, released),
    ...noWaitingWithRoom(ledger),
    ...nothingHalfDone(ledger),
    ...oneBindingPerIp(ledger),
    ...poolsApart(ledger),
    ...carriersCarry(ledger, rule),
    ...uncarriedHeld(ledger, rule),
    ...mismatchCarriesNothing(ledger, rule),
    ...verdictSaid(ledger, rule),
    ...boundStays(ledger, bound),
  ];
}

function* oneCarrierPerIp(ledger: Ledger): Generator<Violation> {
  for (const [ip, services] of [...ledger.carriers].sort(([a], [b]) => ordinal(a, b))) {
    const unshared = services.length > 1 ? sharingProblem(ledger, ip, services) : undefined;
    if (unshared) {
      yield { invariant: 1, object: `IP ${ip}`, detail: `carried by ${services.map(svcName).join(' and ')}, ${unshared}` };
    }
  }
}

/**
 * Why these Services may not carry the IP together, or undefined when they may: all of them
 * tenant Services the status of the IP's address (not a duplicate) names, and its claim Shared.
 */
function sharingProblem(ledger: Ledger, ip: string, services: readonly ServiceView[]): string | undefined {
  const a = (ledger.addressByIp.get(ip) ?? []).find((x) => !x.deleting && !ledger.duplicates.has(x.name));
  const claim = a ? claimOf(ledger, a) : undefined;
  if (!a || !claim || claim.sharing !== 'Shared') {
    return !a ? 'and no IPAddress records it' : `yet ${a.name} is ${claim ? `of Exclusive claim ${claim.namespace}/${claim.name}` : 'bound to no claim'}`;
  }
  const strangers = services.filter((s) => s.placeholder || isAdmin(s) || !names(a, s));
  return strangers.length > 0 ? `yet ${a.name} of Shared claim ${claim.namespace}/${claim.name} names ${holdersText(a)}, not ${strangers.map(svcName).join(', ')}` : undefined;
}

function* boundClaims(ledger: Ledger): Generator<Violation> {
  for (const c of ledger.snapshot.claims) {
    if (c.phase !== 'Bound' || c.deleting) {
      continue;
    }
    const mine = ledger.snapshot.addresses.filter((a) => !a.deleting && claimOf(ledger, a) === c);
    const requested = requestedFamilies(c.family) ?? [];
    for (const family of requested) {
      const n = mine.filter((a) => familyOf(a.ip) === family).length;
      if (n !== 1) {
        yield { invariant: 2, object: claimObject(c), detail: `Bound with ${n} ${family} addresses (${mine.map((a) => a.name).join(', ') || 'none'})` };
      }
    }
    for (const a of mine) {
      const family = familyOf(a.ip);
      if (!family || !requested.includes(family)) {
        yield { invariant: 2, object: claimObject(c), detail: `holds ${a.name}, of a family it did not ask for (${c.family ?? 'IPv4'})` };
      }
      if (!inRanges(ledger.ranges.get(c.className ?? ''), a.ip) || a.className !== c.className) {
        yield { invariant: 2, object: claimObject(c), detail: `holds ${a.name} (${a.ip}, class ${a.className}), outside its class ${c.className}` };
      }
      if (a.phase !== 'Bound' && !(a.phase === 'Conflict' && ledger.stolen.has(a.ip))) {
        yield { invariant: 2, object: claimObject(c), detail: `holds ${a.name}, which is ${a.phase ?? 'without phase'}, not Bound` };
      }
    }
    const listed = mine.map((a) => a.name).sort();
    if (listed.join(',') !== c.addresses.join(',')) {
      yield { invariant: 2, object: claimObject(c), detail: `status lists [${c.addresses.join(', ')}], the ledger binds [${listed.join(', ')}]` };
    }
  }
}

/** Why a Service may not carry this address; undefined when it may. */
function carrierProblem(ledger: Ledger, a: AddressView, s: ServiceView): string | undefined {
  if (s.placeholder) {
    return s.link === a.name ? undefined : `placeholder ${svcName(s)} is not its hold (linked to ${s.link ?? 'nothing'})`;
  }
  if (!names(a, s)) {
    return `${svcName(s)} is not among the Services it is associated to (${holdersText(a)})`;
  }
  const claim = claimOf(ledger, a);
  if (!a.claimRef || s.namespace !== a.claimRef.namespace || s.claim !== a.claimRef.name) {
    return `${svcName(s)} names claim ${s.claim ?? '(none)'}, not its claim ${a.claimRef ? `${a.claimRef.namespace}/${a.claimRef.name}` : '(none)'}`;
  }
  if (!claim || claim.deleting || claim.phase !== 'Bound' || !claim.addresses.includes(a.name)) {
    return `${svcName(s)} names claim ${a.claimRef.name}, which is ${claim ? `${claim.deleting ? 'being deleted, ' : ''}${claim.phase ?? 'Pending'}${claim.addresses.includes(a.name) ? '' : ' without this address'}` : 'gone (another UID)'}`;
  }
  return undefined;
}

function* carriedOnce(ledger: Ledger): Generator<Violation> {
  for (const a of ledger.snapshot.addresses) {
    if (a.deleting || a.phase === 'Lost' || ledger.stolen.has(a.ip) || ledger.duplicates.has(a.name)) {
      continue; // a stolen address is judged by invariant 4, a duplicate by 8
    }
    const carriers = ledger.carriers.get(a.ip) ?? [];
    if (carriers.length === 0) {
      const holds = ledger.snapshot.services.filter((s) => s.placeholder && s.link === a.name).map(svcName);
      yield {
        invariant: 3,
        object: addressObject(a),
        detail: `carried by no Service (phase ${a.phase ?? 'none'}, associated to ${holdersText(a)}, holds waiting: ${holds.join(', ') || 'none'})`,
      };
      continue;
    }
    for (const s of carriers) {
      const problem = carrierProblem(ledger, a, s);
      if (problem) {
        yield { invariant: 3, object: addressObject(a), detail: `carried by ${svcName(s)}, but ${problem}` };
      }
    }
    // Every carrier it names carries it, once: a Shared claim's carrier struck off late, or never on, shows here.
    const seen = new Set<string>();
    for (const h of holdersOf(a)) {
      if (seen.has(holderText(h))) {
        yield { invariant: 3, object: addressObject(a), detail: `names ${holderText(h)} twice among its carriers (${holdersText(a)})` };
      } else if (!carriers.some((s) => !s.placeholder && h.kind === 'Service' && s.namespace === h.namespace && s.name === h.name)) {
        yield { invariant: 3, object: addressObject(a), detail: `associated to ${holderText(h)}, which does not carry it (carried by ${carriers.map(svcName).join(', ')})` };
      }
      seen.add(holderText(h));
    }
  }
}

function* noneOutsideBooks(ledger: Ledger): Generator<Violation> {
  for (const s of ledger.snapshot.services) {
    for (const ip of s.ingress) {
      if (!inAnyClass(ledger, ip)) {
        continue;
      }
      const recorded = (ledger.addressByIp.get(ip) ?? []).filter((a) => !a.deleting);
      if (isAdmin(s)) {
        // The admin took a class IP by hand: the address it belongs to must say so.
        for (const a of recorded.filter((a) => a.phase !== 'Conflict')) {
          yield { invariant: 4, object: addressObject(a), detail: `the admin's Service ${svcName(s)} carries its IP, yet it is ${a.phase ?? 'without phase'}, not Conflict` };
        }
        continue;
      }
      if (s.placeholder) {
        const linked = ledger.snapshot.addresses.find((a) => a.name === s.link);
        if (linked?.ip !== ip) {
          yield { invariant: 4, object: `Service ${svcName(s)}`, detail: `placeholder carries ${ip} for no IPAddress of that IP (linked to ${s.link ?? 'nothing'})` };
        }
        continue;
      }
      if (recorded.length === 0) {
        yield { invariant: 4, object: `Service ${svcName(s)}`, detail: `carries ${ip}, which no IPAddress records` };
      } else if (!recorded.some((a) => names(a, s))) {
        yield { invariant: 4, object: `Service ${svcName(s)}`, detail: `carries ${ip} of ${recorded.map((a) => `${a.name} (associated to ${holdersText(a)})`).join(', ')}, which does not name it among its carriers` };
      }
    }
  }
  for (const a of ledger.snapshot.addresses) {
    if (a.phase === 'Conflict' && !a.deleting && !ledger.stolen.has(a.ip) && !ledger.duplicates.has(a.name)) {
      const thieves = (ledger.carriers.get(a.ip) ?? []).filter((s) => !s.placeholder && carrierProblem(ledger, a, s) !== undefined);
      if (thieves.length === 0) {
        yield { invariant: 4, object: addressObject(a), detail: 'Conflict, but no Service carries its IP without authorization' };
      }
    }
  }
}

function* releasedStays(ledger: Ledger, released: ReleasedMemory): Generator<Violation> {
  for (const a of ledger.snapshot.addresses) {
    if (a.deleting) {
      continue;
    }
    const before = released.get(a.uid);
    const stolen = ledger.stolen.has(a.ip);
    if (before && a.phase !== 'Released' && !(stolen && a.phase === 'Conflict')) {
      yield { invariant: 5, object: addressObject(a), detail: `was Released, is now ${a.phase ?? 'without phase'} (claimRef ${a.claimRef ? `${a.claimRef.namespace}/${a.claimRef.name}` : 'none'})` };
    }
    if (before?.claimUid && a.claimRef?.uid !== before.claimUid) {
      yield { invariant: 5, object: addressObject(a), detail: `was Released by claim uid ${before.claimUid.slice(0, 8)}, now bound to ${a.claimRef?.uid?.slice(0, 8) ?? 'no uid'}` };
    }
    if ((a.phase === 'Released' || before) && !stolen) {
      for (const s of ledger.carriers.get(a.ip) ?? []) {
        if (!(s.placeholder && s.link === a.name)) {
          yield { invariant: 5, object: addressObject(a), detail: `Released, yet carried by ${svcName(s)}` };
        }
      }
    }
  }
}

/** Free IPs of a family in a class: not recorded by any address and not taken by the admin. */
function room(ledger: Ledger, className: string, family: Family): number {
  const ranges = (ledger.ranges.get(className) ?? []).filter((r) => (r.family === 4 ? 'IPv4' : 'IPv6') === family);
  const size = ranges.reduce((n, r) => n + Number(r.last - r.first + 1n), 0);
  const taken = new Set([...ledger.addressByIp.keys(), ...ledger.stolen].filter((ip) => inRanges(ranges, ip)));
  return size - taken.size;
}

function* noWaitingWithRoom(ledger: Ledger): Generator<Violation> {
  for (const c of ledger.snapshot.claims) {
    if (c.phase === 'Bound' || c.deleting || !c.className || !ledger.ranges.has(c.className)) {
      continue;
    }
    const requested = requestedFamilies(c.family) ?? [];
    const covered = new Set(ledger.snapshot.addresses.filter((a) => !a.deleting && claimOf(ledger, a) === c).map((a) => familyOf(a.ip)));
    const missing = requested.filter((f) => !covered.has(f));
    const rooms = missing.map((f) => [f, room(ledger, c.className!, f)] as const);
    if (rooms.every(([, n]) => n > 0)) {
      yield {
        invariant: 6,
        object: claimObject(c),
        detail:
          missing.length === 0
            ? `${c.phase ?? 'Pending'} although an address of every family it asks (${requested.join(', ')}) is recorded for it`
            : `${c.phase ?? 'Pending'} while class ${c.className} has room: ${rooms.map(([f, n]) => `${n} free ${f}`).join(', ')}`,
      };
    }
  }
}

function* nothingHalfDone(ledger: Ledger): Generator<Violation> {
  for (const c of ledger.snapshot.claims) {
    if (c.deleting) {
      yield { invariant: 7, object: claimObject(c), detail: 'still being deleted' };
    } else if (!c.phase) {
      yield { invariant: 7, object: claimObject(c), detail: 'has no phase' };
    }
  }
  for (const a of ledger.snapshot.addresses) {
    if (a.deleting) {
      yield { invariant: 7, object: addressObject(a), detail: 'still being deleted' };
    } else if (!a.phase) {
      yield { invariant: 7, object: addressObject(a), detail: `has no phase (claimRef ${a.claimRef ? `${a.claimRef.namespace}/${a.claimRef.name}` : 'none'})` };
    }
  }
}

function* oneBindingPerIp(ledger: Ledger): Generator<Violation> {
  const listedBy = new Map<string, string[]>();
  for (const c of ledger.snapshot.claims) {
    for (const name of c.addresses) {
      listedBy.set(name, [...(listedBy.get(name) ?? []), `${c.namespace}/${c.name}`]);
    }
  }
  const byName = new Map(ledger.snapshot.addresses.map((a) => [a.name, a]));
  const claimsOfIp = new Map<string, Set<string>>();
  for (const [name, claims] of listedBy) {
    const ip = byName.get(name)?.ip ?? `(IPAddress ${name}, gone)`;
    claimsOfIp.set(ip, new Set([...(claimsOfIp.get(ip) ?? []), ...claims]));
  }
  for (const [ip, claims] of [...claimsOfIp].sort(([a], [b]) => ordinal(a, b))) {
    if (claims.size > 1) {
      yield { invariant: 8, object: `IP ${ip}`, detail: `listed by claims ${[...claims].sort().join(' and ')}` };
    }
  }
  for (const [ip, same] of [...ledger.addressByIp].sort(([a], [b]) => ordinal(a, b))) {
    if (!familyOf(ip) || same.length < 2) {
      continue;
    }
    const [first, ...later] = [...same].sort(earlierFirst);
    const outOfConflict = same.filter((a) => a.phase !== 'Conflict');
    if (outOfConflict.length > 1) {
      yield { invariant: 8, object: `IP ${ip}`, detail: `bound twice: ${outOfConflict.length} IPAddresses of it are out of Conflict: ${outOfConflict.map((a) => `${a.name} (${a.phase ?? 'no phase'})`).join(' and ')}` };
    }
    const listed = same.filter((a) => listedBy.has(a.name));
    if (listed.length > 1) {
      yield { invariant: 8, object: `IP ${ip}`, detail: `bound twice: ${listed.length} IPAddresses of it are listed by claims: ${listed.map((a) => `${a.name} (by ${listedBy.get(a.name)!.join(', ')})`).join(' and ')}` };
    }
    for (const d of later.filter((a) => !a.deleting)) {
      const wrong = [
        ...(d.phase !== 'Conflict' ? [`is ${d.phase ?? 'without phase'}, not Conflict`] : []),
        ...(listedBy.has(d.name) ? [`is listed by ${listedBy.get(d.name)!.join(', ')}`] : []),
      ];
      if (wrong.length > 0) {
        yield { invariant: 8, object: addressObject(d), detail: `duplicates ${first!.name}, which has ${ip} first, yet it ${wrong.join(' and ')}` };
      }
    }
  }
}

function* poolsApart(ledger: Ledger): Generator<Violation> {
  const pools = ledger.snapshot.pools.map((p) => ({
    name: p.name,
    ranges: p.addresses.flatMap((text) => {
      const range = parseRange(text);
      return typeof range === 'string' ? [] : [{ text, range }];
    }),
  }));
  for (const [i, p] of pools.entries()) {
    for (const [j, a] of p.ranges.entries()) {
      for (const b of p.ranges.slice(j + 1)) {
        if (rangesOverlap(a.range, b.range)) {
          yield { invariant: 9, object: `IPAddressPool ${p.name}`, detail: `its own ranges ${a.text} and ${b.text} overlap` };
        }
      }
    }
    for (const q of pools.slice(i + 1)) {
      const clash = p.ranges.flatMap((a) => q.ranges.filter((b) => rangesOverlap(a.range, b.range)).map((b) => `${a.text} and ${b.text}`));
      if (clash.length > 0) {
        yield { invariant: 9, object: `IPAddressPool ${p.name}`, detail: `overlaps IPAddressPool ${q.name}: ${clash.join(', ')}` };
      }
    }
  }
}

/** The association rule's verdict on a Service naming a claim, as the invariants restate it (docs/driver.md). */
type Expected =
  | { readonly ok: true; readonly claim: ClaimView; readonly carried: readonly AddressView[] }
  /** `why`: which Service it yields to and over what, for a refusal the judging order gives. */
  | { readonly ok: false; readonly claim?: ClaimView; readonly reason: string; readonly why?: string };
type Accepted = Extract<Expected, { ok: true }>;

interface Rule {
  /** Every tenant Service naming a claim, with the rule's verdict on it. */
  readonly verdicts: ReadonlyMap<ServiceView, Expected>;
  /** The Services naming each claim (by `namespace/name`), in the order the rule judges them. */
  readonly naming: ReadonlyMap<string, readonly ServiceView[]>;
  /** The Services carrying each claim's addresses by the rule, in that order: one at most for an Exclusive claim. */
  readonly carriers: ReadonlyMap<string, readonly ServiceView[]>;
  readonly addressByName: ReadonlyMap<string, AddressView>;
}

const precedes = (a: ServiceView, b: ServiceView) => ordinal(a.created, b.created) || ordinal(a.name, b.name);
const claimKeyOf = (s: ServiceView) => `${s.namespace}/${s.claim}`;
const isTenant = (s: ServiceView) => (TENANTS as readonly string[]).includes(s.namespace) && !s.placeholder;

/**
 * Which of a claim's addresses a Service of these families carries: a Dual claim's of the
 * Service's families; a single-family claim's only when the Service is exactly of that family.
 */
function carriedBy(claim: ClaimView, addresses: readonly AddressView[], families: readonly Family[]): AddressView[] {
  if (claim.family === 'Dual') {
    return addresses.filter((a) => families.includes(familyOf(a.ip)!));
  }
  const wanted = addresses.map((a) => familyOf(a.ip));
  return families.length === wanted.length && families.every((f) => wanted.includes(f)) ? [...addresses] : [];
}

/** The Service's own verdict: the rule's checks in the driver's order, before it is judged against the others naming the claim. */
function ownVerdict(ledger: Ledger, addressByName: ReadonlyMap<string, AddressView>, s: ServiceView): Expected {
  if (s.type !== 'LoadBalancer') {
    return { ok: false, reason: 'NotLoadBalancer' };
  }
  const claim = ledger.claimByName.get(claimKeyOf(s));
  if (!claim || claim.deleting) {
    return { ok: false, reason: 'ClaimNotFound' };
  }
  const addresses = claim.addresses.map((name) => addressByName.get(name));
  const complete = addresses.every((a): a is AddressView => a !== undefined && !a.deleting && a.claimRef?.uid === claim.uid);
  if (claim.phase !== 'Bound' || addresses.length === 0 || !complete) {
    return { ok: false, claim, reason: 'ClaimNotBound' };
  }
  const required = ledger.snapshot.classes.find((c) => c.name === claim.className)?.loadBalancerClass;
  if (required !== s.lbClass) {
    return { ok: false, claim, reason: 'LoadBalancerClassMismatch' };
  }
  const carried = carriedBy(claim, addresses, s.families);
  return carried.length === 0 ? { ok: false, claim, reason: 'WrongFamily' } : { ok: true, claim, carried };
}

/**
 * The order the rule judges the Services naming a claim in: for a Shared claim first those its
 * addresses' status names (address by address as the claim's status.addresses lists them,
 * associatedTo then sharedWith), so a newcomer never takes a port from a carrier; then, and for
 * an Exclusive claim throughout, oldest first (creationTimestamp, then name).
 */
function judgingOrder(claim: ClaimView | undefined, addressByName: ReadonlyMap<string, AddressView>): (a: ServiceView, b: ServiceView) => number {
  const joined = new Map<string, number>();
  for (const name of claim?.sharing === 'Shared' ? claim.addressOrder : []) {
    const a = addressByName.get(name);
    for (const h of a ? holdersOf(a) : []) {
      if (h.kind === 'Service' && !joined.has(`${h.namespace}/${h.name}`)) {
        joined.set(`${h.namespace}/${h.name}`, joined.size);
      }
    }
  }
  const rank = (s: ServiceView) => joined.get(svcName(s)) ?? Number.POSITIVE_INFINITY;
  return (a, b) => rank(a) - rank(b) || precedes(a, b); // two unranked: NaN, falsy, so by age
}

/**
 * Why MetalLB (v0.16.1's allocator) would not let `s` onto an IP with a Service accepted before
 * it, or undefined: on an address both would carry, other backend keys (BackendMismatch), else a
 * protocol and port both serve (PortInUse); the first such Service in the judging order decides.
 * The histories' Services are all of externalTrafficPolicy Cluster (apply.ts), so BackendMismatch
 * is restated but never met.
 */
function sharingClash(s: ServiceView, carried: readonly AddressView[], accepted: readonly { service: ServiceView; carried: readonly AddressView[] }[]): { reason: string; why: string } | undefined {
  const mine = new Set(carried.map((a) => a.name));
  for (const other of accepted) {
    const both = other.carried.filter((a) => mine.has(a.name)).map((a) => a.ip);
    if (both.length === 0) {
      continue;
    }
    if (other.service.backend !== s.backend) {
      return { reason: 'BackendMismatch', why: `${svcName(other.service)} on ${both.join(', ')} has backend key "${other.service.backend}", this one "${s.backend}"` };
    }
    const taken = other.service.ports.filter((p) => s.ports.includes(p));
    if (taken.length > 0) {
      return { reason: 'PortInUse', why: `${svcName(other.service)} serves ${taken.join(', ')} on ${both.join(', ')}` };
    }
  }
  return undefined;
}

/** A Service the rule admits, judged against those accepted before it: an Exclusive claim takes the first alone, a Shared one each MetalLB lets share. */
function judged(own: Accepted, s: ServiceView, accepted: readonly { service: ServiceView; carried: readonly AddressView[] }[]): Expected {
  const first = accepted[0]?.service;
  if (own.claim.sharing !== 'Shared' && first) {
    return { ok: false, claim: own.claim, reason: 'AssociationRejected', why: `${svcName(first)} is older (created ${first.created} against ${s.created}) and the claim is Exclusive` };
  }
  const clash = sharingClash(s, own.carried, accepted);
  return clash ? { ok: false, claim: own.claim, ...clash } : own;
}

function ruleOf(ledger: Ledger): Rule {
  const addressByName = new Map(ledger.snapshot.addresses.map((a) => [a.name, a]));
  const naming = new Map<string, ServiceView[]>();
  for (const s of ledger.snapshot.services) {
    if (isTenant(s) && s.claim !== undefined && !s.deleting) {
      naming.set(claimKeyOf(s), [...(naming.get(claimKeyOf(s)) ?? []), s]);
    }
  }
  const verdicts = new Map<ServiceView, Expected>();
  const carriers = new Map<string, ServiceView[]>();
  for (const [key, list] of naming) {
    list.sort(judgingOrder(ledger.claimByName.get(key), addressByName));
    const accepted: { service: ServiceView; carried: readonly AddressView[] }[] = [];
    for (const s of list) {
      const own = ownVerdict(ledger, addressByName, s);
      const verdict = own.ok ? judged(own, s, accepted) : own;
      verdicts.set(s, verdict);
      if (verdict.ok) {
        accepted.push({ service: s, carried: verdict.carried });
      }
    }
    carriers.set(key, accepted.map((x) => x.service));
  }
  return { verdicts, naming, carriers, addressByName };
}

/** What the Service's Attached condition should say: a carrier carries; every other says its refusal. */
function expectedCondition(rule: Rule, s: ServiceView): ConditionView {
  const verdict = rule.verdicts.get(s)!;
  return verdict.ok ? { status: 'True', reason: 'Attached' } : { status: 'False', reason: verdict.reason };
}

const said = (c: ConditionView | undefined) => (c ? `${c.status}/${c.reason}` : 'absent');
const classIps = (ledger: Ledger, s: ServiceView) => s.ingress.filter((ip) => inAnyClass(ledger, ip));
/** The names of the addresses a Service carries by the rule (none when refused). */
const carriedNames = (rule: Rule, s: ServiceView) => {
  const verdict = rule.verdicts.get(s);
  return verdict?.ok ? verdict.carried.map((a) => a.name) : [];
};

/** Why the rule has `s` carry its claim, in words for a violation. */
function carrierWhy(rule: Rule, key: string, s: ServiceView): string {
  const verdict = rule.verdicts.get(s);
  if (verdict?.ok && verdict.claim.sharing === 'Shared') {
    const order = rule.naming.get(key) ?? [];
    return `accepted for Shared claim ${key} (judged #${order.indexOf(s) + 1} of ${order.map(svcName).join(', ')})`;
  }
  return `the oldest admitted Service naming ${key} (created ${s.created})`;
}

function* carriersCarry(ledger: Ledger, rule: Rule): Generator<Violation> {
  for (const c of ledger.snapshot.claims) {
    if (c.deleting || c.phase !== 'Bound') {
      continue;
    }
    const key = `${c.namespace}/${c.name}`;
    const carriers = rule.carriers.get(key) ?? [];
    for (const name of c.addresses) {
      const a = rule.addressByName.get(name);
      if (!a || a.deleting || ledger.stolen.has(a.ip)) {
        continue; // a stolen IP is judged by invariant 4
      }
      const expected = carriers.filter((s) => carriedNames(rule, s).includes(name));
      for (const s of expected.filter((x) => !x.ingress.includes(a.ip))) {
        yield { invariant: 11, object: `Service ${svcName(s)}`, detail: `${carrierWhy(rule, key, s)}, yet it does not carry ${a.ip} (${a.name}); it carries ${s.ingress.join(', ') || 'nothing'}, pin ${s.pin ?? 'none'}` };
      }
      // As a set: the order they joined is history (the claim's order is judged by 14).
      const wanted = expected.map((s) => `Service ${svcName(s)}`).sort(ordinal);
      const named = holdersOf(a).map(holderText).sort(ordinal);
      if (wanted.join(', ') !== named.join(', ')) {
        yield {
          invariant: 11,
          object: addressObject(a),
          detail: wanted.length > 0
            ? `carried by the rule by ${wanted.join(', ')}, yet associated to ${holdersText(a)}`
            : `no Service naming ${key} carries it by the rule${carriers.length > 0 ? ` (${carriers.map(svcName).join(', ')} carry its ${[...new Set(carriers.flatMap((s) => carriedNames(rule, s)))].join(', ')})` : ''}, yet it is associated to ${holdersText(a)}`,
        };
      }
    }
  }
  for (const [key, services] of rule.naming) {
    const carriers = rule.carriers.get(key) ?? [];
    for (const s of services.filter((x) => !carriers.includes(x))) {
      const carries = classIps(ledger, s);
      if (carries.length > 0 || s.pinned) {
        const verdict = rule.verdicts.get(s)!;
        const why = verdict.ok ? '?' : `it is refused (${verdict.reason}${verdict.why ? `: ${verdict.why}` : ''})`;
        yield { invariant: 11, object: `Service ${svcName(s)}`, detail: `names ${key} but ${why}, yet it carries ${carries.join(', ') || 'nothing'}${s.pinned ? `, pinned by the driver to ${s.pin ?? '(no pin)'}` : ''}` };
      }
    }
  }
}

function* uncarriedHeld(ledger: Ledger, rule: Rule): Generator<Violation> {
  for (const [key, carriers] of rule.carriers) {
    const first = carriers[0] ? rule.verdicts.get(carriers[0]) : undefined;
    if (!first?.ok) {
      continue; // no carrier: invariants 3 and 11 judge its addresses
    }
    // Only a Dual claim's carriers may leave one of its addresses to nobody (single-stack Services).
    const carried = new Set(carriers.flatMap((s) => carriedNames(rule, s)));
    for (const name of first.claim.addresses.filter((n) => !carried.has(n))) {
      const a = rule.addressByName.get(name)!;
      if (ledger.stolen.has(a.ip)) {
        continue;
      }
      const on = ledger.carriers.get(a.ip) ?? [];
      const holds = on.filter((s) => s.placeholder && s.link === a.name);
      const others = on.filter((s) => !(s.placeholder && s.link === a.name));
      if (holds.length === 0 || others.length > 0) {
        yield {
          invariant: 12,
          object: addressObject(a),
          detail: `the ${familyOf(a.ip)} address of Dual claim ${key}, none of whose carriers (${carriers.map((s) => `${svcName(s)}, ${s.families.join('+')}`).join('; ')}) is of its family: ${holds.length === 0 ? 'no hold carries it' : 'held'}${others.length > 0 ? `, and ${others.map(svcName).join(', ')} carry it` : ''}`,
        };
      }
    }
  }
}

function* mismatchCarriesNothing(ledger: Ledger, rule: Rule): Generator<Violation> {
  for (const [s, verdict] of rule.verdicts) {
    if (!verdict.ok && verdict.reason === 'LoadBalancerClassMismatch' && (s.ingress.length > 0 || s.pin !== undefined || s.pinned)) {
      const required = ledger.snapshot.classes.find((c) => c.name === verdict.claim?.className)?.loadBalancerClass;
      yield {
        invariant: 13,
        object: `Service ${svcName(s)}`,
        detail: `of loadBalancerClass ${s.lbClass ?? '(none)'}, naming ${claimKeyOf(s)} of class ${verdict.claim?.className} (${required ?? 'no loadBalancerClass'}), yet it carries ${s.ingress.join(', ') || 'nothing'}, pin ${s.pin ?? 'none'}`,
      };
    }
  }
}

function* verdictSaid(ledger: Ledger, rule: Rule): Generator<Violation> {
  for (const s of ledger.snapshot.services.filter((x) => isTenant(x) && !x.deleting)) {
    const expected = rule.verdicts.has(s) ? expectedCondition(rule, s) : undefined;
    if (said(expected) !== said(s.attached)) {
      const verdict = rule.verdicts.get(s);
      const why = verdict && !verdict.ok && verdict.why ? `: ${verdict.why}` : '';
      yield { invariant: 14, object: `Service ${svcName(s)}`, detail: `its ${SERVICE_ATTACHED} condition is ${said(s.attached)}, the rule says ${said(expected)}${why}${s.claim !== undefined ? ` (names ${s.claim})` : ' (names no claim)'}` };
    }
  }
  for (const c of ledger.snapshot.claims.filter((x) => !x.deleting)) {
    const key = `${c.namespace}/${c.name}`;
    const naming = rule.naming.get(key) ?? [];
    const carriers = rule.carriers.get(key) ?? [];
    const expected: ConditionView | undefined = carriers.length > 0
      ? { status: 'True', reason: 'Attached' }
      : naming.length > 0
        ? { status: 'False', reason: expectedCondition(rule, naming[0]!).reason }
        : undefined;
    if (said(expected) !== said(c.attached)) {
      yield { invariant: 14, object: claimObject(c), detail: `its ${CLAIM_ATTACHED} condition is ${said(c.attached)}, the rule says ${said(expected)} (named by ${naming.map(svcName).join(', ') || 'no Service'}, in the judging order)` };
    }
    // In order: associatedTo the first carrier the rule judges, sharedWith the others as judged.
    const named = `associatedTo ${c.associatedTo ? holderText(c.associatedTo) : 'nothing'}, sharedWith [${(c.sharedWith ?? []).map(holderText).join(', ')}]`;
    const [first, ...rest] = carriers;
    const wanted = `associatedTo ${first ? `Service ${svcName(first)}` : 'nothing'}, sharedWith [${rest.map((s) => `Service ${svcName(s)}`).join(', ')}]`;
    if (named !== wanted) {
      yield { invariant: 14, object: claimObject(c), detail: `its status names ${named}, the rule's carriers in its judging order are ${wanted} (${c.sharing})` };
    }
  }
}

function* boundStays(ledger: Ledger, bound: BoundMemory): Generator<Violation> {
  for (const c of ledger.snapshot.claims) {
    const before = bound.get(c.uid);
    if (c.phase === 'Bound' && !c.deleting && before !== undefined && before !== c.addresses.join(', ')) {
      yield { invariant: 15, object: claimObject(c), detail: `was Bound to ${before}, is now Bound to ${c.addresses.join(', ') || 'nothing'}` };
    }
  }
}

/**
 * Invariant 10, on what the apiserver answered an operation: a claim's spec edit must be refused
 * with 422 naming the field. A skipped edit, a claim that is gone (404) or changed meanwhile (409),
 * and a request that never got an answer say nothing either way.
 */
export function checkOutcome(op: Operation, outcome: string): Violation | undefined {
  if (op.kind !== 'editClaim' || outcome.startsWith('skipped') || outcome.startsWith('error:') || /^HTTP (404|409)\b/.test(outcome)) {
    return undefined;
  }
  const field = `spec.${op.field}`;
  if (outcome.startsWith('HTTP 422') && outcome.includes(field)) {
    return undefined;
  }
  return { invariant: 10, object: `IPAddressClaim ${op.namespace}/${op.name}`, detail: `the ${field} edit was answered "${outcome}", not refused with 422 naming ${field}` };
}
