/**
 * The association rule, in one place (docs/driver.md, "Association"). A
 * Service is admitted to a claim when it exists and is not being deleted, is a
 * LoadBalancer of its claim's class's loadBalancerClass, names a claim of this
 * driver that is Bound, and has an IP family of the claim's (a single-family
 * claim needs exactly its family; a Dual claim gives a single-stack Service
 * the address of its family and keeps the other held). Among the admitted
 * Services naming one claim, the oldest (creationTimestamp, then name) carries
 * the addresses; the others get nothing and say why. An address is associated
 * with a Service exactly while that Service carries it by this rule.
 * Everything here reads the caches and decides; the reconcilers write what it says.
 */
import type { V1Service } from '@kubernetes/client-node';
import { IP_ADDRESS_CLAIM_ANNOTATION, PROVISIONER_ANNOTATION, precedes, type AssociatedTo, type IPAddress, type IPAddressClaim } from '../../api/v1alpha1/index.js';
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

/**
 * The Service that carries a claim's addresses: the oldest of the Services
 * naming it that the rule admits, whatever the order in which they came or
 * the driver restarted. Undefined when none is admitted.
 */
export function claimWinner(cluster: AssociationReader, namespace: string, claimName: string, asked?: V1Service): V1Service | undefined {
  let winner: V1Service | undefined;
  // The Service asked about counts as it was handed in (it may be newer than the cache's copy).
  const stored = cluster.servicesForClaim(namespace, claimName).filter((s) => !asked || !sameService(s, asked));
  for (const service of asked ? [asked, ...stored] : stored) {
    if (ownVerdict(cluster, service).ok && (!winner || servicePrecedes(service, winner))) {
      winner = service;
    }
  }
  return winner;
}

/** What `service` carries by the rule alone (no hand-over): the claim's addresses for the winner, nothing for the others. */
function ruledVerdict(cluster: AssociationReader, service: V1Service): Verdict {
  const verdict = ownVerdict(cluster, service);
  if (!verdict.ok) {
    return verdict;
  }
  const claimName = verdict.claim.metadata.name!;
  const winner = claimWinner(cluster, service.metadata!.namespace!, claimName, service);
  if (!sameService(winner, service)) {
    const message = `IPAddressClaim ${claimName} serves Service ${winner!.metadata!.name}, the oldest Service naming it; one claim serves one workload`;
    return { ok: false, claim: verdict.claim, refusal: { reason: REFUSAL.associationRejected, message } };
  }
  return verdict;
}

/** Whether `address` is associated with the Service `to` names, by the rule above. */
export function associationHolds(cluster: AssociationReader, address: IPAddress, to: AssociatedTo | undefined = address.status?.associatedTo): boolean {
  if (to?.kind !== 'Service' || !isAssociatedTo(address, to)) {
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
  for (const address of verdict.addresses) {
    const to = address.status?.associatedTo;
    if (!to || (to.kind === 'Service' && to.namespace === namespace && to.name === name)) {
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
  return verdict;
}

/** Whether the address's status names this holder. */
export function isAssociatedTo(address: IPAddress, to: Pick<AssociatedTo, 'kind' | 'namespace' | 'name'>): boolean {
  const at = address.status?.associatedTo;
  return at?.kind === to.kind && at.namespace === to.namespace && at.name === to.name;
}
