/**
 * The association rule, in one place (docs/driver.md, "Association"). A
 * Service is admitted to a claim when it exists and is not being deleted, is a
 * LoadBalancer of its claim's class's loadBalancerClass, names a claim of this
 * driver that is Bound, and has an IP family of the claim's (a single-family
 * claim needs exactly its family; a Dual claim gives a single-stack Service
 * the address of its family and keeps the other held). Among the admitted
 * Services naming an Exclusive claim, the oldest (creationTimestamp, then name)
 * carries the addresses; the others get nothing and say why. A Shared claim's
 * admitted Services all carry them, each as long as MetalLB lets it share the
 * IP with those that carry it already, or are older (docs/driver.md, "Sharing"). An address
 * is associated with a Service exactly while that Service carries it by this
 * rule. Everything here reads the caches and decides; the reconcilers write
 * what it says.
 */
import type { V1Service } from '@kubernetes/client-node';
import { holdersOf, IP_ADDRESS_CLAIM_ANNOTATION, PROVISIONER_ANNOTATION, precedes, sameHolder, type AssociatedTo, type IPAddress, type IPAddressClaim } from '../../api/v1alpha1/index.js';
import { familyOf, type Family } from '../../api/ip.js';
import type { DriverStore } from './store.js';
import { driverPin, ingressIps } from './services.js';
import { DRIVER } from './well-known.js';

/** Why a Service that names a claim gets nothing: said on the Service, on the claim, and in an Event. */
export const REFUSAL = {
  notLoadBalancer: 'NotLoadBalancer',
  claimNotFound: 'ClaimNotFound',
  claimNotBound: 'ClaimNotBound',
  wrongFamily: 'WrongFamily',
  loadBalancerClassMismatch: 'LoadBalancerClassMismatch',
  associationRejected: 'AssociationRejected',
  /** A Shared claim's Service using a port and protocol an older one uses on the same IP (MetalLB: "port ... is already in use"). */
  portInUse: 'PortInUse',
  /** A Shared claim's Service MetalLB cannot put on one IP with an older one: externalTrafficPolicy Local with other selectors, or Local beside Cluster. */
  backendMismatch: 'BackendMismatch',
  /** The winner waits for the Service that carried the address before to let it go (not a refusal: it will carry it). */
  handingOver: 'HandingOver',
} as const;
export type RefusalReason = (typeof REFUSAL)[keyof typeof REFUSAL];

/** Refusals that are the normal course of things, not a tenant's mistake: said as Normal Events. */
export const PASSING_REFUSALS: ReadonlySet<RefusalReason> = new Set([REFUSAL.claimNotBound, REFUSAL.handingOver]);

export interface Refusal {
  readonly reason: RefusalReason;
  readonly message: string;
}

/**
 * What a Service may carry: some or all of its claim's addresses; or nothing,
 * with a refusal when it asked for something it cannot have, without one when
 * it asked for nothing of this driver's (no annotation, being deleted, another
 * driver's claim).
 */
export type Verdict =
  | { readonly ok: true; readonly claim: IPAddressClaim; readonly addresses: IPAddress[] }
  | { readonly ok: false; readonly claim?: IPAddressClaim; readonly refusal?: Refusal };

export type AssociationReader = Pick<DriverStore, 'claim' | 'address' | 'service' | 'ipClass' | 'servicesForClaim'>;

/**
 * The IP families a Service carries, as MetalLB reads them: those of its
 * cluster IPs (spec.ipFamilies, which the apiserver sets from them). A
 * PreferDualStack Service on a dual-stack cluster is dual.
 */
export function serviceFamilies(service: V1Service): Family[] {
  const declared = (service.spec?.ipFamilies ?? []).filter((f): f is Family => f === 'IPv4' || f === 'IPv6');
  if (declared.length > 0) {
    return declared;
  }
  const ips = service.spec?.clusterIPs?.length ? service.spec.clusterIPs : service.spec?.clusterIP ? [service.spec.clusterIP] : [];
  return ips.map(familyOf).filter((f): f is Family => f !== undefined);
}

/**
 * Which of a claim's addresses a Service of these families carries: a Dual
 * claim's of the Service's families (at least one); a single-family claim's
 * only when the Service is exactly of that family, since MetalLB would leave
 * a dual-stack Service's other family without an address.
 */
export function carriedAddresses(claimFamily: string | undefined, addresses: readonly IPAddress[], has: readonly Family[]): IPAddress[] {
  const familyOfAddress = (a: IPAddress) => familyOf(a.spec.address);
  if (claimFamily === 'Dual') {
    return addresses.filter((a) => has.includes(familyOfAddress(a)!));
  }
  const wanted = addresses.map(familyOfAddress);
  return has.length === wanted.length && has.every((f) => wanted.includes(f)) ? [...addresses] : [];
}

/** The class's loadBalancerClass a Service must carry (undefined: none). */
function requiredLoadBalancerClass(cluster: AssociationReader, claim: IPAddressClaim): string | undefined {
  const className = claim.status?.className;
  return className ? cluster.ipClass(className)?.spec.loadBalancerClass || undefined : undefined;
}

/** The Service's own verdict: the rule above, before asking which Service naming the claim is the oldest. */
function ownVerdict(cluster: AssociationReader, service: V1Service): Verdict {
  const claimName = service.metadata?.annotations?.[IP_ADDRESS_CLAIM_ANNOTATION];
  if (!claimName || service.metadata?.deletionTimestamp) {
    return { ok: false };
  }
  const namespace = service.metadata!.namespace!;
  if (service.spec?.type !== 'LoadBalancer') {
    const message = `a ${service.spec?.type ?? 'ClusterIP'} Service cannot carry the address of IPAddressClaim ${claimName}; make it type LoadBalancer`;
    return { ok: false, refusal: { reason: REFUSAL.notLoadBalancer, message } };
  }
  const claim = cluster.claim(namespace, claimName);
  if (!claim || claim.metadata.deletionTimestamp) {
    return { ok: false, refusal: { reason: REFUSAL.claimNotFound, message: `IPAddressClaim ${namespace}/${claimName} not found` } };
  }
  const provisioner = claim.metadata.annotations?.[PROVISIONER_ANNOTATION];
  if (provisioner !== undefined && provisioner !== DRIVER) {
    return { ok: false }; // another driver's claim: its driver answers
  }
  const entries = claim.status?.addresses ?? [];
  const addresses = entries.map((e) => cluster.address(e.name));
  const complete = addresses.every(
    (a): a is IPAddress => a !== undefined && !a.metadata.deletionTimestamp && a.spec.claimRef?.uid === claim.metadata.uid,
  );
  if (claim.status?.phase !== 'Bound' || entries.length === 0 || !complete) {
    const message = `IPAddressClaim ${claimName} is ${claim.status?.phase ?? 'Pending'}${claim.status?.phase === 'Bound' ? ' but its addresses are not all recorded' : ''}; waiting`;
    return { ok: false, claim, refusal: { reason: REFUSAL.claimNotBound, message } };
  }
  // A Service's loadBalancerClass is immutable: a mismatch is refused, never corrected.
  const required = requiredLoadBalancerClass(cluster, claim);
  const carries = service.spec.loadBalancerClass || undefined;
  if (required !== carries) {
    const message =
      `IPAddressClaim ${claimName} is of IPAddressClass ${claim.status?.className}, whose addresses Services of loadBalancerClass ${required ?? '(none)'} carry; ` +
      `this Service is of loadBalancerClass ${carries ?? '(none)'} (immutable: recreate the Service with spec.loadBalancerClass ${required ?? 'unset'})`;
    return { ok: false, claim, refusal: { reason: REFUSAL.loadBalancerClassMismatch, message } };
  }
  const has = serviceFamilies(service);
  const carried = carriedAddresses(claim.spec.family, addresses, has);
  if (carried.length === 0) {
    const holds = addresses.map((a) => familyOf(a.spec.address)).join(' and ');
    const message =
      `IPAddressClaim ${claimName} holds ${holds} but the Service carries ${has.join(' and ') || 'no IP family'}; ` +
      (claim.spec.family === 'Dual' ? 'give the Service an IP family of the claim' : 'set spec.ipFamilies and spec.ipFamilyPolicy to match the claim');
    return { ok: false, claim, refusal: { reason: REFUSAL.wrongFamily, message } };
  }
  return { ok: true, claim, addresses: carried };
}

/** Oldest first: creationTimestamp, then name (a Service without a timestamp sorts last). */
const servicePrecedes = (a: V1Service, b: V1Service) => precedes({ metadata: a.metadata ?? {} }, { metadata: b.metadata ?? {} });

const sameService = (a: V1Service | undefined, b: V1Service) => a?.metadata?.namespace === b.metadata?.namespace && a?.metadata?.name === b.metadata?.name;

/** A Service's ports as MetalLB's allocator keys them (k8salloc.Ports): protocol and port; the apiserver defaults the protocol to TCP. */
export function servicePorts(service: V1Service): string[] {
  return (service.spec?.ports ?? []).map((p) => `${p.protocol ?? 'TCP'}/${p.port}`);
}

/**
 * A Service's backend key as MetalLB's allocator computes it (k8salloc.BackendKey): its selector,
 * as labels.Set.String() writes it, under externalTrafficPolicy Local; empty under Cluster, which
 * shares regardless of backends.
 */
export function backendKey(service: V1Service): string {
  if (service.spec?.externalTrafficPolicy !== 'Local') {
    return '';
  }
  return Object.entries(service.spec.selector ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/**
 * Why MetalLB would not let `service` onto an IP its older carriers hold, or undefined when it
 * would: MetalLB v0.16.1's allocator (internal/allocator/allocator.go, checkSharing and sharingOK)
 * wants the same sharing key (the driver sets one per claim), the same backend key, and no
 * protocol and port in use by another Service on the IP.
 */
export function sharingRefusal(claimName: string, service: V1Service, addresses: readonly IPAddress[], older: readonly { service: V1Service; addresses: readonly IPAddress[] }[]): Refusal | undefined {
  const mine = new Set(addresses.map((a) => a.spec.address));
  const ports = servicePorts(service);
  for (const other of older) {
    const shared = other.addresses.map((a) => a.spec.address).filter((ip) => mine.has(ip));
    if (shared.length === 0) {
      continue;
    }
    const otherName = other.service.metadata!.name!;
    const [mineKey, theirs] = [backendKey(service), backendKey(other.service)];
    if (mineKey !== theirs) {
      const describe = (s: V1Service, key: string) => (s.spec?.externalTrafficPolicy === 'Local' ? `externalTrafficPolicy Local selecting ${key || 'nothing'}` : 'externalTrafficPolicy Cluster');
      const message =
        `IPAddressClaim ${claimName}'s ${shared.join(', ')} is shared by Service ${otherName} (${describe(other.service, theirs)}); this Service has ${describe(service, mineKey)}, ` +
        'and MetalLB shares an IP only among Services of the same externalTrafficPolicy that, under Local, select the same Pods';
      return { reason: REFUSAL.backendMismatch, message };
    }
    const taken = servicePorts(other.service).filter((p) => ports.includes(p));
    if (taken.length > 0) {
      const message = `${taken.join(', ')} on IPAddressClaim ${claimName}'s ${shared.join(', ')} ${taken.length > 1 ? 'are' : 'is'} already served by Service ${otherName}; Services sharing an address need disjoint ports`;
      return { reason: REFUSAL.portInUse, message };
    }
  }
  return undefined;
}

/**
 * For a Shared claim, the Services its addresses are associated with, in the order they joined
 * (`namespace/name` to rank): they are judged first, so a Service that comes later never takes a
 * port, or the address, from one that carries it (a creationTimestamp has one-second grain, and a
 * Service made in the same second as a carrier may sort before it by name). Empty for an
 * Exclusive claim, whose carrier is the oldest Service alone.
 */
function joinOrder(cluster: AssociationReader, claim: IPAddressClaim | undefined): Map<string, number> {
  const order = new Map<string, number>();
  if (claim?.spec.sharing !== 'Shared') {
    return order;
  }
  for (const entry of claim.status?.addresses ?? []) {
    for (const to of holdersOf(cluster.address(entry.name)?.status)) {
      const key = `${to.namespace}/${to.name}`;
      if (to.kind === 'Service' && !order.has(key)) {
        order.set(key, order.size);
      }
    }
  }
  return order;
}

/** The order in which the rule judges the Services naming `claim`: a Shared claim's carriers first, as they joined; then oldest first. */
export function judgingOrder(cluster: AssociationReader, claim: IPAddressClaim | undefined): (a: V1Service, b: V1Service) => number {
  const joined = joinOrder(cluster, claim);
  const rank = (s: V1Service) => joined.get(`${s.metadata?.namespace}/${s.metadata?.name}`) ?? Number.POSITIVE_INFINITY;
  return (a, b) => rank(a) - rank(b) || (servicePrecedes(a, b) ? -1 : servicePrecedes(b, a) ? 1 : 0);
}

/**
 * What each Service naming a claim carries by the rule alone (no hand-over): its own verdict,
 * then, among the admitted, for an Exclusive claim the oldest only; for a Shared one, the
 * carriers first in the order they joined, then the others oldest first, each as long as it may
 * share with those judged before it. The order is read from the caches and the addresses'
 * status, so a restarted driver answers the same. `asked` counts as handed in (it may be newer
 * than the cache's copy).
 */
function ruledVerdicts(cluster: AssociationReader, namespace: string, claimName: string, asked?: V1Service): { service: V1Service; verdict: Verdict }[] {
  const stored = cluster.servicesForClaim(namespace, claimName).filter((s) => !asked || !sameService(s, asked));
  const naming = (asked ? [asked, ...stored] : stored).sort(judgingOrder(cluster, cluster.claim(namespace, claimName)));
  const carriers: { service: V1Service; addresses: IPAddress[] }[] = [];
  return naming.map((service) => {
    const verdict = ownVerdict(cluster, service);
    if (!verdict.ok) {
      return { service, verdict };
    }
    const name = verdict.claim.metadata.name!;
    if (verdict.claim.spec.sharing !== 'Shared' && carriers.length > 0) {
      const message = `IPAddressClaim ${name} serves Service ${carriers[0]!.service.metadata!.name}, the oldest Service naming it; one claim serves one workload unless its spec.sharing is Shared`;
      return { service, verdict: { ok: false, claim: verdict.claim, refusal: { reason: REFUSAL.associationRejected, message } } };
    }
    const refusal = sharingRefusal(name, service, verdict.addresses, carriers);
    if (refusal) {
      return { service, verdict: { ok: false, claim: verdict.claim, refusal } };
    }
    carriers.push({ service, addresses: verdict.addresses });
    return { service, verdict };
  });
}

/** What `service` carries by the rule alone (no hand-over). */
function ruledVerdict(cluster: AssociationReader, service: V1Service): Verdict {
  const verdict = ownVerdict(cluster, service);
  if (!verdict.ok) {
    return verdict;
  }
  const ruled = ruledVerdicts(cluster, service.metadata!.namespace!, verdict.claim.metadata.name!, service);
  return ruled.find((r) => sameService(r.service, service))!.verdict;
}

/** Whether `address` is associated with the Service `to` names (one of its holders), by the rule above. */
export function associationHolds(cluster: AssociationReader, address: IPAddress, to: AssociatedTo): boolean {
  if (to.kind !== 'Service' || !isAssociatedTo(address, to)) {
    return false;
  }
  const service = cluster.service(to.namespace, to.name);
  if (!service) {
    return false;
  }
  const verdict = ruledVerdict(cluster, service);
  return verdict.ok && verdict.addresses.some((a) => a.metadata.name === address.metadata.name);
}

/**
 * What `service` may carry now: the rule's verdict, except that the winner
 * waits (HandingOver) while an address is still associated with another
 * workload, until that one has let go: the address pass holds it first, so the
 * IP goes from the one Service to the hold to the other, never to both.
 */
export function associationVerdict(cluster: AssociationReader, service: V1Service): Verdict {
  const verdict = ruledVerdict(cluster, service);
  if (!verdict.ok) {
    return verdict;
  }
  const namespace = service.metadata!.namespace!;
  const name = service.metadata!.name!;
  const self = { kind: 'Service', namespace, name };
  // An address associated with this Service already stays (a claim made Exclusive: the others let go).
  for (const address of verdict.addresses.filter((a) => !isAssociatedTo(a, self))) {
    for (const to of holdersOf(address.status)) {
      // A fellow carrier of a Shared claim: nothing to wait for.
      if (associationHolds(cluster, address, to)) {
        continue;
      }
      const claimName = verdict.claim.metadata.name;
      if (to.kind !== 'Service') {
        const message = `IPAddressClaim ${claimName} already serves ${to.kind} ${to.namespace}/${to.name}; one claim serves one workload`;
        return { ok: false, claim: verdict.claim, refusal: { reason: REFUSAL.associationRejected, message } };
      }
      const ip = address.spec.address;
      const previous = cluster.service(to.namespace, to.name);
      if (previous && (ingressIps(previous).includes(ip) || driverPin(previous).includes(ip))) {
        const message = `IPAddressClaim ${claimName}'s ${ip} is still carried by Service ${to.namespace}/${to.name}; it comes here once that one has let it go`;
        return { ok: false, claim: verdict.claim, refusal: { reason: REFUSAL.handingOver, message } };
      }
      // The Service it names has let go already (or is gone): the winner takes it over.
    }
  }
  return verdict;
}

/** Whether the address's status names this holder (first or sharing). */
export function isAssociatedTo(address: IPAddress, to: Pick<AssociatedTo, 'kind' | 'namespace' | 'name'>): boolean {
  return holdersOf(address.status).some((h) => sameHolder(h, to));
}
