/**
 * The association rule, in one place (docs/driver.md, "Association"): an address
 * is associated with a Service exactly while that Service exists and is not
 * being deleted, is a LoadBalancer whose IP families are exactly those of its
 * claim's addresses, names the address's claim in its annotation, and that
 * claim is Bound to the address. Everything here reads the caches and decides;
 * the reconcilers write what it says.
 */
import type { V1Service } from '@kubernetes/client-node';
import { IP_ADDRESS_CLAIM_ANNOTATION, PROVISIONER_ANNOTATION, type AssociatedTo, type IPAddress, type IPAddressClaim } from '../../api/v1alpha1/index.js';
import { familyOf, type Family } from '../../api/ip.js';
import type { DriverStore } from './store.js';
import { DRIVER } from './well-known.js';

/** Why a Service that names a claim gets nothing (the reason is the Event's). */
export interface Refusal {
  readonly reason: 'NotLoadBalancer' | 'ClaimNotFound' | 'ClaimNotBound' | 'WrongFamily' | 'AssociationRejected';
  readonly message: string;
}

/**
 * What a Service may carry: the claim's addresses; or nothing, with a refusal
 * when it asked for something it cannot have, without one when it asked for
 * nothing of this driver's (no annotation, being deleted, another driver's claim).
 */
export type Verdict =
  | { readonly ok: true; readonly claim: IPAddressClaim; readonly addresses: IPAddress[] }
  | { readonly ok: false; readonly claim?: IPAddressClaim; readonly refusal?: Refusal };

type Reader = Pick<DriverStore, 'claim' | 'address' | 'service'>;

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

const sameFamilies = (a: readonly Family[], b: readonly Family[]) => a.length === b.length && a.every((f) => b.includes(f));

/** The verdict before asking whether another Service already serves the claim. */
function ownVerdict(cluster: Reader, service: V1Service): Verdict {
  const claimName = service.metadata?.annotations?.[IP_ADDRESS_CLAIM_ANNOTATION];
  if (!claimName || service.metadata?.deletionTimestamp) {
    return { ok: false };
  }
  const namespace = service.metadata!.namespace!;
  if (service.spec?.type !== 'LoadBalancer') {
    const message = `a ${service.spec?.type ?? 'ClusterIP'} Service cannot carry the address of IPAddressClaim ${claimName}; make it type LoadBalancer`;
    return { ok: false, refusal: { reason: 'NotLoadBalancer', message } };
  }
  const claim = cluster.claim(namespace, claimName);
  if (!claim || claim.metadata.deletionTimestamp) {
    return { ok: false, refusal: { reason: 'ClaimNotFound', message: `IPAddressClaim ${namespace}/${claimName} not found` } };
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
    return { ok: false, claim, refusal: { reason: 'ClaimNotBound', message } };
  }
  const wanted = addresses.map((a) => familyOf(a.spec.address)).filter((f): f is Family => f !== undefined);
  const has = serviceFamilies(service);
  if (!sameFamilies(wanted, has)) {
    const message =
      `IPAddressClaim ${claimName} holds ${wanted.join(' and ')} but the Service carries ${has.join(' and ') || 'no IP family'}; ` +
      `set spec.ipFamilies and spec.ipFamilyPolicy to match the claim`;
    return { ok: false, claim, refusal: { reason: 'WrongFamily', message } };
  }
  return { ok: true, claim, addresses };
}

/** Whether `address` is associated with the Service `to` names, by the rule above. */
export function associationHolds(cluster: Reader, address: IPAddress, to: AssociatedTo | undefined = address.status?.associatedTo): boolean {
  if (to?.kind !== 'Service' || !isAssociatedTo(address, to)) {
    return false;
  }
  const service = cluster.service(to.namespace, to.name);
  if (!service) {
    return false;
  }
  const verdict = ownVerdict(cluster, service);
  return verdict.ok && verdict.addresses.some((a) => a.metadata.name === address.metadata.name);
}

/** What `service` may carry now: its claim's addresses unless the rule or one-workload-per-claim says no. */
export function associationVerdict(cluster: Reader, service: V1Service): Verdict {
  const verdict = ownVerdict(cluster, service);
  if (!verdict.ok) {
    return verdict;
  }
  const namespace = service.metadata!.namespace!;
  const name = service.metadata!.name!;
  for (const address of verdict.addresses) {
    const to = address.status?.associatedTo;
    const elsewhere = to && !(to.kind === 'Service' && to.namespace === namespace && to.name === name);
    if (elsewhere && (to.kind !== 'Service' || associationHolds(cluster, address, to))) {
      const message = `IPAddressClaim ${verdict.claim.metadata.name} already serves ${to.kind} ${to.namespace}/${to.name}; one claim serves one workload`;
      return { ok: false, claim: verdict.claim, refusal: { reason: 'AssociationRejected', message } };
    }
  }
  return verdict;
}

/** Whether the address's status names this holder. */
export function isAssociatedTo(address: IPAddress, to: Pick<AssociatedTo, 'kind' | 'namespace' | 'name'>): boolean {
  const at = address.status?.associatedTo;
  return at?.kind === to.kind && at.namespace === to.namespace && at.name === to.name;
}
