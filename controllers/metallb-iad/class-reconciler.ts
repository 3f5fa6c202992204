/**
 * Renders one IPAddressPool (autoAssign false) and L2Advertisement per served
 * class, never one that would overlap another pool, and says on the class
 * whether it could and whether MetalLB applies it (docs/driver.md, "The class").
 */
import type { Controller, ReconcileResult } from '../runtime/controller.js';
import { keyOf } from '../runtime/kube.js';
import type { Manager } from '../runtime/manager.js';
import type { DriverClusterStore } from './cluster-store.js';
import { warnAndRethrow, type EventRecorder } from '../runtime/events.js';
import { GROUP, type IPAddressClass } from '../../api/v1alpha1/index.js';
import { deepEqual } from '../runtime/equal.js';
import type { V1Service } from '@kubernetes/client-node';
import { CARRIERS_ONLY, releasedPool, renderBackend } from './backend.js';
import {
  backingPoolName,
  desiredEntries,
  entriesOverlapping,
  overlapKeeper,
  overlappingEntries,
  overlappingEntriesMessage,
  parseClassParameters,
  rangeEntries,
  rangesField,
  servedBy,
  type OverlapSide,
  type RangeEntry,
} from './class-parameters.js';
import { ingressIps } from './services.js';
import { BACKEND_REASON, bookStatus, classConditions, configurationVerdict, sameConditions, type BackendVerdict } from './class-status.js';
import { classBooksOf, type FamilyBooks } from './class-books.js';
import type { DriverMetrics } from './metrics.js';
import { parseRange, rangeContains, rangesOverlap, type IpRange } from '../../api/ip.js';
import { ADVERTISEMENT_KINDS, type AdvertisementKind, type DriverStore, type MetallbObject } from './store.js';
import { CARRIER_LABEL, SERVED_BY_CLASS_ANNOTATION } from './well-known.js';

/**
 * How long the class's books wait for more address changes before they are
 * written: during a long burst, one write (and one count over every address of
 * the class) per 5 s. At 1 s a 10,000-claim burst cost 0.04 writes per claim.
 */
const BOOKS_COALESCE_MS = 5_000;

/** While Services of a class still lack the carrier label, how soon to look again. */
const CARRIER_LABEL_RECHECK_MS = 2_000;

/**
 * Whether every field the driver renders has that value in the current
 * object. Fields the apiserver defaults (the pool's avoidBuggyIPs) are not
 * the driver's, so they do not count as drift.
 */
function rendersAs(current: MetallbObject | undefined, desired: MetallbObject): boolean {
  const have = (current?.spec ?? {}) as Record<string, unknown>;
  const rendered = Object.entries(desired.spec ?? {});
  // A BGPAdvertisement is rendered whole (backend.ts): a field it no longer has is a difference too.
  const extra = desired.kind === 'BGPAdvertisement' && Object.keys(have).some((field) => !(field in (desired.spec ?? {})));
  return current !== undefined && !extra && rendered.every(([field, value]) => deepEqual(have[field], value));
}

/** Whether the current object carries every annotation the rendered one names (an adopted pool's). */
function annotatedAs(current: MetallbObject | undefined, desired: MetallbObject): boolean {
  const have = current?.metadata.annotations ?? {};
  return Object.entries(desired.metadata.annotations ?? {}).every(([key, value]) => have[key] === value);
}

/** Whether the current object carries the owner references the rendered one names. */
function owns(current: MetallbObject | undefined, desired: MetallbObject): boolean {
  const uids = new Set((current?.metadata.ownerReferences ?? []).map((o) => o.uid));
  return (desired.metadata.ownerReferences ?? []).every((o) => uids.has(o.uid));
}

/** A MetalLB object some IPAddressClass owns: the driver's. Anything else is an admin's, never written. */
export function ownedByAClass(object: MetallbObject): boolean {
  return (object.metadata.ownerReferences ?? []).some((o) => o.kind === 'IPAddressClass' && o.apiVersion.startsWith(`${GROUP}/`));
}

export class ClassReconciler {
  private readonly reported = new Map<string, string>();

  private readonly now: () => string;

  constructor(
    private readonly store: DriverStore,
    private readonly events: EventRecorder,
    private readonly options: { readonly now?: () => string; readonly metrics?: DriverMetrics } = {},
  ) {
    this.now = options.now ?? (() => new Date().toISOString());
  }

  async reconcile(name: string): Promise<ReconcileResult | void> {
    const ipClass = this.store.ipClass(name);
    const serving = ipClass && !ipClass.metadata.deletionTimestamp && servedBy(ipClass) ? ipClass : undefined;
    await this.giveBackPools(name, serving);
    if (!serving) {
      return; // the pool and advertisement it rendered go with the class (ownerReferences)
    }
    let verdict: BackendVerdict = { reason: BACKEND_REASON.poolWritten, message: '' };
    try {
      const outcome = await this.render(serving);
      verdict = outcome.verdict;
      return outcome.result;
    } catch (error) {
      verdict = { reason: BACKEND_REASON.backendFailed, message: (error as Error).message };
      throw error;
    } finally {
      await this.writeStatus(serving, verdict, classBooksOf(this.store, serving));
    }
  }

  private async render(ipClass: IPAddressClass): Promise<{ verdict: BackendVerdict; result?: ReconcileResult }> {
    const name = ipClass.metadata.name!;
    const parameters = parseClassParameters(ipClass, (pool) => this.store.poolNamed(pool));
    if (!parameters.ok) {
      // Nothing is written: a half-written pool would be worse than none.
      return { verdict: this.refuse(ipClass, BACKEND_REASON.invalidClassParameters, parameters.message) };
    }
    const own = overlappingEntries(parameters.addresses, parameters.ranges);
    if (own) {
      // MetalLB refuses a pool whose own entries overlap, and then every later change of any class.
      return { verdict: this.refuse(ipClass, BACKEND_REASON.overlappingRanges, overlappingEntriesMessage(rangesField(parameters), own)) };
    }
    const rival = this.overlapping(ipClass, parameters);
    if (rival) {
      // Nothing of the pool in place moves: the reservations in it stay where they are.
      return { verdict: this.refuse(ipClass, BACKEND_REASON.overlappingClassParameters, rival) };
    }
    const foreign = this.foreignOverlap(parameters.ranges, parameters.adoptedPool);
    if (foreign) {
      // MetalLB refuses a configuration with overlapping pools and then ignores every later change.
      const message =
        `parameters.addresses overlap IPAddressPool ${foreign.metadata.namespace}/${foreign.metadata.name}, which is not this driver's; ` +
        `MetalLB would refuse both and stop applying any configuration, so no pool is written (the pool in place, if any, is kept as it is)`;
      return { verdict: this.refuse(ipClass, BACKEND_REASON.overlapsForeignPool, message) };
    }
    const carriersOnly = this.carriersLabelled(name, parameters.ranges);
    const adopted = parameters.adoptedPool ? this.store.poolNamed(parameters.adoptedPool) : undefined;
    const { pool, advertisement } = renderBackend(ipClass, this.store.metallbNamespace, parameters.addresses, carriersOnly, adopted, parameters.advertisement);
    const kind = advertisement.kind as AdvertisementKind;
    const pairs = [
      [pool, this.store.pool(name)],
      [advertisement, this.store.advertisement(name, kind)],
    ] as const;
    // The other kind, rendered before the class switched between L2 and BGP: the pool (and so every
    // reservation and address in it) stays as it is; only how MetalLB announces it changes.
    const switchedFrom = ADVERTISEMENT_KINDS.filter((k) => k !== kind)
      .map((k) => this.store.advertisement(name, k))
      .filter((a): a is MetallbObject => a !== undefined && ownedByAClass(a));
    // The pool a class takes over is an admin's by design; anything else of its name must be the driver's.
    const squatter = pairs.find(([desired, current]) => current && !(adopted && desired === pool) && !ownedByAClass(current));
    if (squatter) {
      const [, current] = squatter;
      const message = `${current!.kind ?? 'object'} ${current!.metadata.namespace}/${current!.metadata.name} exists and is not this driver's; it is left alone, and no pool is written`;
      return { verdict: this.refuse(ipClass, BACKEND_REASON.poolNotOwned, message) };
    }
    this.reported.delete(name);
    try {
      // Written only when the cache differs from what the class renders: a pass that changes nothing costs no request.
      for (const [desired, current] of pairs) {
        if (!rendersAs(current, desired) || !owns(current, desired) || !annotatedAs(current, desired)) {
          await this.store.apply(desired, current);
        }
      }
      // Written first, deleted after: the addresses are never left unannounced by both kinds at once.
      for (const old of switchedFrom) {
        await this.store.deleteAdvertisement(old);
      }
    } catch (error) {
      // E.g. MetalLB's CRDs not installed, or a namespace that does not exist.
      this.options.metrics?.backendFailure(name);
      warnAndRethrow(this.events, ipClass, 'BackendFailed', `could not write the MetalLB pool and advertisement ${pool.metadata.name} in ${pool.metadata.namespace}`, error);
    }
    const served = adopted
      ? `IPAddressPool ${pool.metadata.namespace}/${pool.metadata.name} (taken over) and ${kind} ${advertisement.metadata.name} serve ${parameters.addresses.join(', ')}`
      : `IPAddressPool and ${kind} ${pool.metadata.namespace}/${pool.metadata.name} serve ${parameters.addresses.join(', ')}`;
    const verdict = { reason: BACKEND_REASON.poolWritten, message: served };
    return { verdict, result: carriersOnly ? undefined : { requeueAfterMs: CARRIER_LABEL_RECHECK_MS } };
  }

  /** A refusal: one Warning Event per distinct message (the condition carries it for as long as it holds). */
  private refuse(ipClass: IPAddressClass, reason: BackendVerdict['reason'], message: string): BackendVerdict {
    const name = ipClass.metadata.name!;
    if (this.reported.get(name) !== message) {
      this.reported.set(name, message);
      this.events.event(ipClass, 'Warning', reason, message);
    }
    return { reason, message };
  }

  /** Written only when something in it changed: counts and conditions move with the cluster, not with each pass. */
  private async writeStatus(ipClass: IPAddressClass, backend: BackendVerdict, books: FamilyBooks[] | undefined): Promise<void> {
    const conditions = classConditions(ipClass, backend, configurationVerdict(this.store.configurationStates()), this.now());
    const { conditions: previous, ...previousCounts } = ipClass.status ?? {};
    const counts = bookStatus(books);
    if (!sameConditions(previous, conditions) || !deepEqual(previousCounts, counts)) {
      await this.store.updateClassStatus({ ...ipClass, status: { ...counts, conditions } });
    }
  }

  /**
   * Whether the pool may admit only carriers: it does already, or every
   * Service that holds an IP of the class carries the label (after an
   * upgrade, the address and Service passes label them first; a pool that
   * selected before would make MetalLB take the IPs of the unlabelled ones).
   */
  private carriersLabelled(className: string, ranges: readonly IpRange[]): boolean {
    if (deepEqual(this.store.pool(className)?.spec?.serviceAllocation, CARRIERS_ONLY)) {
      return true;
    }
    const carrier = (s: V1Service) => s.metadata?.labels?.[CARRIER_LABEL] === 'true';
    const recorded = this.store.addressesOfClass(className).every((a) => this.store.servicesWithIp(a.spec.address).every(carrier));
    // A pool taken over still serves Services that were never adopted: they hold IPs no address records.
    return recorded && this.store.servicesCarryingIps().every((s) => carrier(s) || !ingressIps(s).some((ip) => ranges.some((r) => rangeContains(r, ip))));
  }

  /**
   * An adopted pool whose class no longer names it (the class is gone, no
   * longer served, or takes another pool): given back as it was, so its
   * Services keep their IPs and MetalLB assigns from it as before.
   */
  private async giveBackPools(className: string, ipClass: IPAddressClass | undefined): Promise<void> {
    const keep = ipClass ? backingPoolName(ipClass) : undefined;
    for (const pool of this.store.allPools()) {
      if (pool.metadata.annotations?.[SERVED_BY_CLASS_ANNOTATION] === className && pool.metadata.name !== keep) {
        await this.store.apply(releasedPool(pool), pool);
        if (ipClass) {
          this.events.event(ipClass, 'Normal', 'PoolGivenBack', `IPAddressPool ${pool.metadata.namespace}/${pool.metadata.name} is no longer served by this class; its spec is restored`);
        }
      }
    }
  }

  /** A pool in MetalLB's namespace that is not the driver's (nor the one this class takes over) and shares an address with these ranges. */
  private foreignOverlap(ranges: readonly IpRange[], adoptedPool: string | undefined): MetallbObject | undefined {
    return this.store.allPools().find(
      (pool) =>
        !ownedByAClass(pool) &&
        pool.metadata.name !== adoptedPool &&
        !pool.metadata.annotations?.[SERVED_BY_CLASS_ANNOTATION] &&
        (pool.spec?.addresses ?? []).some((text) => {
          const range = parseRange(text);
          return typeof range !== 'string' && ranges.some((r) => rangesOverlap(r, range));
        }),
    );
  }

  /**
   * Why this class may not write its pool for another class's sake, or
   * undefined: a served class whose desired ranges overlap and that keeps them
   * (overlapKeeper), or a pool of another class, as MetalLB has it now, that
   * shares an address with them (that class has not rewritten it yet, or keeps
   * it while refused): two MetalLB pools must never share an address.
   */
  private overlapping(ipClass: IPAddressClass, parameters: { readonly addresses: string[]; readonly ranges: IpRange[]; readonly adoptedPool?: string }): string | undefined {
    const name = ipClass.metadata.name!;
    const field = rangesField(parameters);
    const desired = desiredEntries(parameters);
    const kept = this.store.pool(name) ? ' (the pool in place is kept as it is)' : '';
    const mine: OverlapSide = { ipClass, desired, written: rangeEntries(this.store.pool(name)?.spec?.addresses) };
    const quoted = (entries: readonly RangeEntry[]) => entries.map((e) => JSON.stringify(e.text)).join(', ');
    for (const other of this.store.allClasses()) {
      const otherName = other.metadata.name!;
      if (otherName === name || !servedBy(other) || other.metadata.deletionTimestamp) {
        continue;
      }
      const parsed = parseClassParameters(other, (pool) => this.store.poolNamed(pool));
      // A class whose parameters are invalid or overlap themselves writes nothing with them; its
      // pool as written, if any, still counts below.
      if (!parsed.ok || overlappingEntries(parsed.addresses, parsed.ranges)) {
        continue;
      }
      const theirs: OverlapSide = {
        ipClass: other,
        desired: desiredEntries(parsed),
        written: rangeEntries(this.store.pool(otherName)?.spec?.addresses),
      };
      const ours = entriesOverlapping(mine.desired, theirs.desired);
      if (ours.length === 0) {
        continue;
      }
      const { keeper, holds } = overlapKeeper(mine, theirs);
      if (keeper === 'theirs') {
        const why = holds ? 'which serves them already' : 'which comes first (older, then by name) and takes them';
        return `${field} ${quoted(ours)} overlap ${quoted(entriesOverlapping(theirs.desired, mine.desired))} of IPAddressClass "${otherName}", ${why}; no pool written${kept}`;
      }
    }
    const myPool = backingPoolName(ipClass);
    for (const pool of this.store.allPools()) {
      const holder = classOfWrittenPool(pool);
      if (pool.metadata.name === myPool || !holder || holder === name) {
        continue;
      }
      const written = rangeEntries(pool.spec?.addresses);
      const ours = entriesOverlapping(desired, written);
      if (ours.length > 0) {
        return (
          `${field} ${quoted(ours)} overlap ${quoted(entriesOverlapping(written, desired))} of IPAddressPool ${pool.metadata.namespace}/${pool.metadata.name}, ` +
          `which IPAddressClass "${holder}" has written in MetalLB now; no pool written until that pool no longer has them${kept}`
        );
      }
    }
    return undefined;
  }
}

/** The class whose pool this is in MetalLB: the class that owns it, or that took it over; none for an admin's own. */
function classOfWrittenPool(pool: MetallbObject): string | undefined {
  const owner = (pool.metadata.ownerReferences ?? []).find((o) => o.kind === 'IPAddressClass' && o.apiVersion.startsWith(`${GROUP}/`));
  return owner?.name ?? pool.metadata.annotations?.[SERVED_BY_CLASS_ANNOTATION];
}

/** What the driver renders changed: spec or owners (status is MetalLB's). */
export const rendersDiffer = (previous: MetallbObject, next: MetallbObject) =>
  !deepEqual(previous.spec, next.spec) || !deepEqual(previous.metadata.ownerReferences, next.metadata.ownerReferences);

/** A change the driver reads in a class: its spec (generation) or its deletion; not the status it writes itself. */
export const classChanged = (previous: IPAddressClass, next: IPAddressClass) =>
  previous.metadata.generation !== next.metadata.generation || previous.metadata.deletionTimestamp !== next.metadata.deletionTimestamp;

/**
 * The class controller and what wakes it: any class change re-checks every
 * class (overlap is decided across them); any pool coming, going or changing
 * (the driver's or an admin's) wakes every class, since a class writes no pool
 * overlapping another as written; the driver's own advertisement drifting,
 * coming or going wakes its class; MetalLB's verdict on its configuration
 * changing wakes every class.
 */
export function setupClassController(manager: Manager, store: DriverClusterStore, events: EventRecorder, metrics?: DriverMetrics): Controller {
  const allClasses = () => store.allClasses().map(keyOf);
  // A pool a class took over names it, even once the class is gone (then the pool is given back).
  const adoptedBy = (pool: MetallbObject) => {
    const className = pool.metadata.annotations?.[SERVED_BY_CLASS_ANNOTATION];
    return className ? [className] : [];
  };
  const ownClass = (object: MetallbObject) => {
    const className = store.classOfBackend(object);
    return className ? [className] : [];
  };
  let configuration = JSON.stringify(configurationVerdict(store.configurationStates()));
  return manager
    .controller('iad-class')
    // The class itself too: a deleted one is no longer in the cache, and may have a pool to give back.
    .watches(store.classes, (c) => [keyOf(c), ...allClasses()], { updates: classChanged })
    // Every pool, the driver's too: whether a class may write its pool depends on every other pool as written.
    .watches(store.pools, (pool) => [...adoptedBy(pool), ...allClasses()], { updates: rendersDiffer })
    .watches(store.advertisements, ownClass, { updates: rendersDiffer })
    .watches(store.bgpAdvertisements, ownClass, { updates: rendersDiffer })
    // The class's books: recorded addresses coming, going, or changing phase; a burst is one status write.
    .watches(
      store.addresses,
      (address, previous) => [address.spec.className, ...(previous && previous.spec.className !== address.spec.className ? [previous.spec.className] : [])],
      { delayMs: BOOKS_COALESCE_MS, updates: (p, n) => p.status?.phase !== n.status?.phase || p.spec.className !== n.spec.className || p.metadata.deletionTimestamp !== n.metadata.deletionTimestamp },
    )
    .watches(store.configurationStateInformer, () => {
      // Every served class says MetalLB's verdict, so only a change of verdict counts.
      const next = JSON.stringify(configurationVerdict(store.configurationStates()));
      if (next === configuration) {
        return [];
      }
      configuration = next;
      return allClasses();
    })
    .complete(new ClassReconciler(store, events, { metrics }));
}
