/** Renders one IPAddressPool (autoAssign false) and L2Advertisement per served class (docs/driver.md). */
import type { ReconcileResult } from '../runtime/controller.js';
import { warnAndRethrow, type EventRecorder } from '../runtime/events.js';
import type { IPAddressClass } from '../../api/v1alpha1/index.js';
import { deepEqual } from '../runtime/equal.js';
import { renderBackend } from './backend.js';
import { parseClassParameters, servedBy } from './class-parameters.js';
import { rangesOverlap, type IpRange } from '../../api/ip.js';
import type { DriverStore, MetallbObject } from './store.js';
import { CARRIER_LABEL } from './well-known.js';

/** While Services of a class still lack the carrier label, how soon to look again. */
const CARRIER_LABEL_RECHECK_MS = 2_000;

/**
 * Whether every field the driver renders has that value in the current
 * object. Fields the apiserver defaults (the pool's avoidBuggyIPs) are not
 * the driver's, so they do not count as drift.
 */
function rendersAs(current: MetallbObject | undefined, desired: MetallbObject): boolean {
  const have = (current?.spec ?? {}) as Record<string, unknown>;
  return current !== undefined && Object.entries(desired.spec ?? {}).every(([field, value]) => deepEqual(have[field], value));
}

/** Whether the current object carries the owner references the rendered one names. */
function owns(current: MetallbObject | undefined, desired: MetallbObject): boolean {
  const uids = new Set((current?.metadata.ownerReferences ?? []).map((o) => o.uid));
  return (desired.metadata.ownerReferences ?? []).every((o) => uids.has(o.uid));
}

export class ClassReconciler {
  private readonly reported = new Map<string, string>();

  constructor(
    private readonly store: DriverStore,
    private readonly events: EventRecorder,
  ) {}

  async reconcile(name: string): Promise<ReconcileResult | void> {
    const ipClass = this.store.ipClass(name);
    if (!ipClass || ipClass.metadata.deletionTimestamp || !servedBy(ipClass)) {
      return; // the pool and advertisement go with the class (ownerReferences)
    }
    const parameters = parseClassParameters(ipClass);
    if (!parameters.ok) {
      // Nothing is written: a half-written pool would be worse than none.
      if (this.reported.get(name) !== parameters.message) {
        this.reported.set(name, parameters.message);
        this.events.event(ipClass, 'Warning', 'InvalidClassParameters', parameters.message);
      }
      return;
    }
    const rival = this.overlapping(ipClass, parameters.ranges);
    if (rival) {
      // The class that holds the range first keeps it; nothing of its reservations moves.
      const message = `parameters.addresses overlap those of IPAddressClass "${rival}", which serves them already; no pool written`;
      if (this.reported.get(name) !== message) {
        this.reported.set(name, message);
        this.events.event(ipClass, 'Warning', 'OverlappingClassParameters', message);
      }
      return;
    }
    this.reported.delete(name);
    const carriersOnly = this.carriersLabelled(name);
    const { pool, advertisement } = renderBackend(ipClass, this.store.metallbNamespace, parameters.addresses, carriersOnly);
    try {
      // Written only when the cache differs from what the class renders: a pass that changes nothing costs no request.
      for (const [desired, current] of [
        [pool, this.store.pool(name)],
        [advertisement, this.store.advertisement(name)],
      ] as const) {
        if (!rendersAs(current, desired) || !owns(current, desired)) {
          await this.store.apply(desired, current);
        }
      }
    } catch (error) {
      // E.g. MetalLB's CRDs not installed, or a namespace that does not exist.
      warnAndRethrow(this.events, ipClass, 'BackendFailed', `could not write the MetalLB pool and advertisement ${pool.metadata.name} in ${pool.metadata.namespace}`, error);
    }
    return carriersOnly ? undefined : { requeueAfterMs: CARRIER_LABEL_RECHECK_MS };
  }

  /**
   * Whether the pool may admit only carriers: it does already, or every
   * Service that holds an IP of the class carries the label (after an
   * upgrade, the address and Service passes label them first; a pool that
   * selected before would make MetalLB take the IPs of the unlabelled ones).
   */
  private carriersLabelled(className: string): boolean {
    if (this.store.pool(className)?.spec?.serviceAllocation !== undefined) {
      return true;
    }
    return this.store
      .addressesOfClass(className)
      .every((a) => this.store.servicesWithIp(a.spec.address).every((s) => s.metadata?.labels?.[CARRIER_LABEL] === 'true'));
  }

  /**
   * Another served class whose ranges overlap and that came first: it already
   * has its pool (and this one does not), or, neither or both having one, it is
   * older (then smaller by name). Two MetalLB pools must never share an address.
   */
  private overlapping(ipClass: IPAddressClass, ranges: readonly IpRange[]): string | undefined {
    const name = ipClass.metadata.name!;
    const mine = Boolean(this.store.pool(name));
    for (const other of this.store.allClasses()) {
      const otherName = other.metadata.name!;
      if (otherName === name || !servedBy(other) || other.metadata.deletionTimestamp) {
        continue;
      }
      const parsed = parseClassParameters(other);
      if (!parsed.ok || !ranges.some((r) => parsed.ranges.some((o) => rangesOverlap(r, o)))) {
        continue;
      }
      const theirs = Boolean(this.store.pool(otherName));
      const firstByAge = String(other.metadata.creationTimestamp ?? '') + otherName < String(ipClass.metadata.creationTimestamp ?? '') + name;
      if ((theirs && !mine) || (theirs === mine && firstByAge)) {
        return otherName;
      }
    }
    return undefined;
  }
}
