/**
 * Association and Conflict detection (docs/driver.md): the only writer of
 * tenant Services. A Service gets exactly what the association rule
 * (association.ts) gives it; what it gives up is held first; an IP carried
 * without authorization puts its address in Conflict.
 */
import type { V1Condition, V1Service } from '@kubernetes/client-node';
import { claimKey, duplicateOf, holdersOf, IP_ADDRESS_CLAIM_ANNOTATION, sameHolder, withHolders, type AssociatedTo, type Condition, type IPAddress } from '../../api/v1alpha1/index.js';
import { compareIps } from '../../api/ip.js';
import type { EventRecorder } from '../runtime/events.js';
import { keyOf, splitKey } from '../runtime/kube.js';
import type { Controller } from '../runtime/controller.js';
import type { Manager } from '../runtime/manager.js';
import type { DriverClusterStore } from './cluster-store.js';
import { associationHolds, associationVerdict, isAssociatedTo, PASSING_REFUSALS, type Verdict } from './association.js';
import { saysAlready, serviceAttachment, withCondition } from './attachment.js';
import { SERVICE_ATTACHED_CONDITION, SHARING_ANNOTATION, sharingKeyOf } from './well-known.js';
import { ensureHold, releaseHolds } from './holds.js';
import { isPlaceholder } from './placeholders.js';
import { asObject, authorizes, carriesAddressKeys, driverPin, driverSharingKey, ingressIps, pinnedAs, serviceHolder, withoutAddressKeys, withoutPin, withPin } from './services.js';
import type { DriverStore } from './store.js';

export class ServiceReconciler {
  constructor(
    private readonly store: DriverStore,
    private readonly events: EventRecorder,
  ) {}

  async reconcile(key: string): Promise<void> {
    const { namespace = '', name } = splitKey(key);
    const service = this.store.service(namespace, name);
    if (!service || isPlaceholder(service, this.store.placeholderNamespace)) {
      return; // a deleted Service: the address pass holds again what it carried
    }
    const verdict = associationVerdict(this.store, service);
    const target = verdict.ok ? verdict.addresses : [];
    const holder = serviceHolder(service);
    // 1. What the Service gives up is held first: the hold waits in MetalLB and takes the IP the
    //    moment the Service lets go, so MetalLB has no moment in which to hand it to anyone else.
    //    While other Services sharing it carry it on, MetalLB keeps it theirs: no hold then.
    const kept = new Set(target.map((a) => a.metadata.name));
    for (const address of this.store.addressesHeldBy(namespace, name).filter((a) => !kept.has(a.metadata.name))) {
      if (!this.othersCarry(address, holder)) {
        await ensureHold(this.store, this.events, address);
      }
    }
    // 2. The association is recorded before the pin, so the Service never carries an address
    //    whose status names someone else (which would read as a Conflict). The Services a Shared
    //    claim's address is associated with stay; one whose association ended has let go already
    //    (the verdict waited for it), and is replaced.
    for (const address of target.filter((a) => !isAssociatedTo(a, holder))) {
      const staying = holdersOf(address.status).filter((to) => associationHolds(this.store, address, to));
      await this.store.updateAddressStatus({ ...address, status: withHolders(address.status ?? {}, [...staying, holder]) });
    }
    // 3. The pin, exactly as the rule says; taking it off (with the carrier label) makes MetalLB
    //    take the IP back, as the class's pool admits only carriers. On a Service naming a claim this
    //    driver answers for, every MetalLB address key is the driver's: none stays while it pins nothing.
    const pin = target.map((a) => a.spec.address).sort(compareIps).join(',');
    const share = verdict.ok ? this.sharingKey(service, verdict) : undefined;
    const answered = verdict.ok || verdict.refusal !== undefined;
    let current = service;
    const settled = pin || !answered ? pinnedAs(service, pin, share) : !carriesAddressKeys(service);
    if (!settled) {
      // An address this Service carried already lost its pin or label (a replace without the
      // driver's keys): MetalLB freed the IP, so it is held again until the pin is back, unless
      // other Services sharing it carry it on. A sharing key alone changing frees nothing.
      const keyOnly = pin !== '' && pinnedAs(service, pin, service.metadata?.annotations?.[SHARING_ANNOTATION]);
      const unpinned = keyOnly ? [] : target.filter((a) => isAssociatedTo(a, holder) && !this.othersCarry(a, holder));
      for (const address of unpinned) {
        await ensureHold(this.store, this.events, address);
      }
      current = await this.store.updateService(pin ? withPin(service, pin, share) : answered ? withoutAddressKeys(service) : withoutPin(service));
      if (pin) {
        this.events.event(asObject(service), 'Normal', 'Associated', `pinned ${pin} from IPAddressClaim ${verdict.claim!.metadata.name}`);
      } else if (driverPin(service).length > 0) {
        const why = (!verdict.ok && verdict.refusal?.message) || 'the Service names no claim of this driver';
        this.events.event(asObject(service), 'Normal', 'Disassociated', `${why}; pin removed, the address is held again`);
      }
    }
    // 4. Only now do the holds of what it pins go: MetalLB gives the freed IP to the Service, which
    //    asks for it already.
    for (const address of target) {
      await releaseHolds(this.store, address.metadata.name!);
    }
    await this.detectConflicts(current);
    await this.report(current, verdict);
  }

  /** Whether another Service associated with the address still holds that association (a Shared claim's). */
  private othersCarry(address: IPAddress, self: AssociatedTo): boolean {
    return holdersOf(address.status).some((to) => !sameHolder(to, self) && associationHolds(this.store, address, to));
  }

  /**
   * The sharing key a carrier gets: its claim's, when the claim is Shared. A carrier of a claim
   * made Exclusive keeps the key it has while another Service still holds one of its IPs: MetalLB
   * changes a key in place only for the IP's sole user, and would otherwise take the IP away.
   */
  private sharingKey(service: V1Service, verdict: Extract<Verdict, { ok: true }>): string | undefined {
    if (verdict.claim.spec.sharing === 'Shared') {
      return sharingKeyOf(verdict.claim.metadata.uid!);
    }
    const current = driverSharingKey(service);
    const self = serviceHolder(service);
    const others = verdict.addresses.some((a) =>
      this.store.servicesWithIp(a.spec.address).some((s) => !isPlaceholder(s, this.store.placeholderNamespace) && !sameHolder(serviceHolder(s), self)),
    );
    return current !== undefined && others ? current : undefined;
  }

  /**
   * The verdict, where the Service's owner looks: its Attached condition,
   * written when what it says changes, with an Event then (on the claim too,
   * for a refusal); a Service naming no claim of this driver's carries none.
   */
  private async report(service: V1Service, verdict: Verdict): Promise<void> {
    const said = serviceAttachment(verdict);
    // The REST client hands Services over as parsed JSON: a condition's time is the apiserver's string, not client-node's Date.
    const current = service.status?.conditions as unknown as Condition[] | undefined;
    if (saysAlready(current, SERVICE_ATTACHED_CONDITION, said)) {
      return;
    }
    const conditions = withCondition(current, SERVICE_ATTACHED_CONDITION, said, new Date().toISOString(), service.metadata?.generation);
    await this.store.updateServiceStatus({ ...service, status: { ...service.status, conditions: conditions as unknown as V1Condition[] } });
    if (verdict.ok || !verdict.refusal) {
      return;
    }
    const { reason, message } = verdict.refusal;
    const type = PASSING_REFUSALS.has(reason) ? 'Normal' : 'Warning';
    this.events.event(asObject(service), type, reason, message);
    if (verdict.claim) {
      this.events.event(verdict.claim, type, reason, `Service ${service.metadata!.namespace}/${service.metadata!.name}: ${message}`);
    }
  }

  private async detectConflicts(service: V1Service): Promise<void> {
    for (const ip of ingressIps(service)) {
      for (const address of this.store.addressesByIp(ip)) {
        // A duplicate is the core's Conflict already; asked last, since the usual pass stops earlier.
        if (!address.spec.claimRef || authorizes(address, service) || address.status?.phase === 'Conflict' || duplicateOf(address, this.store.addressesByIp(ip))) {
          continue;
        }
        await this.markConflict(address, service, ip);
      }
    }
  }

  private async markConflict(address: IPAddress, service: V1Service, ip: string): Promise<void> {
    await this.store.updateAddressStatus({ ...address, status: { ...address.status, phase: 'Conflict' } });
    const ref = address.spec.claimRef!;
    const who = `Service ${service.metadata!.namespace}/${service.metadata!.name}`;
    this.events.event(asObject(service), 'Warning', 'AddressConflict', `${ip} belongs to IPAddressClaim ${ref.namespace}/${ref.name}`);
    this.events.event(address, 'Warning', 'Conflict', `${who} carries ${ip} without authorization`);
  }
}

/**
 * The Service controller and what wakes it: tenant Services (not the driver's
 * placeholders); a claim → the Services naming it; an address → the Services
 * naming its claim and those it is associated with.
 */
export function setupServiceController(manager: Manager, store: DriverClusterStore, events: EventRecorder): Controller {
  const naming = (namespace: string, claim: string) => store.servicesForClaim(namespace, claim).map(keyOf);
  const claimOf = (service: V1Service | undefined) => service?.metadata?.annotations?.[IP_ADDRESS_CLAIM_ANNOTATION];
  return manager
    .controller('iad-service')
    .for(store.services, { when: (s) => !isPlaceholder(s, store.placeholderNamespace) })
    // A Service coming, going or changing can change which Service naming its claim is the oldest admitted.
    .watches(
      store.services,
      (service, previous) => {
        const namespace = service.metadata!.namespace!;
        return [...new Set([claimOf(service), claimOf(previous)])].filter((c): c is string => !!c).flatMap((c) => naming(namespace, c));
      },
      { when: (s) => !isPlaceholder(s, store.placeholderNamespace) },
    )
    .watches(store.claims, (claim) => naming(claim.metadata.namespace!, claim.metadata.name!))
    .watches(store.addresses, (address) => {
      const ref = address.spec.claimRef;
      const carriers = holdersOf(address.status).filter((to) => to.kind === 'Service');
      return [...(ref ? naming(ref.namespace, ref.name) : []), ...carriers.map((to) => claimKey(to.namespace, to.name))];
    })
    .complete(new ServiceReconciler(store, events));
}
