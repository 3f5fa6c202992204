/**
 * What the invariants look at, read through the admin client: claims,
 * addresses, Services and classes, narrowed to the fields that matter and
 * sorted, so that a snapshot is plain data the checker judges alone and its
 * fingerprint changes exactly when the ledger does.
 */
import type * as k8s from '@kubernetes/client-node';
import { canonicalIp, familyOf, type Family } from '../../../../api/ip.js';
import { crd, LINK_LABEL, PLACEHOLDERS, type Cr, type Platform } from '../platform.js';
import { ordinal } from './order.js';
import { CLAIM_ANNOTATION, CLAIM_ATTACHED, METALLB_PIN, PINNED_MARKER, SERVICE_ATTACHED } from './world.js';

/** A condition as the invariants read it: its status and reason (not its times, nor its message). */
export interface ConditionView {
  readonly status: string;
  readonly reason: string;
}

/** A workload an address or a claim names as carrying it (status.associatedTo, status.sharedWith[]). */
export interface HolderView {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

export interface ClaimView {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly deleting: boolean;
  readonly phase?: string;
  /** status.className, else spec.className. */
  readonly className?: string;
  readonly family?: string;
  /** spec.sharing, Exclusive when unset. */
  readonly sharing: 'Exclusive' | 'Shared';
  /** status.addresses[].name, sorted. */
  readonly addresses: readonly string[];
  /** status.addresses[].name as listed: a Shared claim's carriers are judged in the order its addresses name them. */
  readonly addressOrder: readonly string[];
  /** status.associatedTo: the first workload that carries its addresses (the driver's verdict). */
  readonly associatedTo?: HolderView;
  /** status.sharedWith: a Shared claim's other carriers. */
  readonly sharedWith?: readonly HolderView[];
  /** The driver's `Attached` condition. */
  readonly attached?: ConditionView;
}

export interface AddressView {
  readonly name: string;
  readonly uid: string;
  /** Canonical text (the text as written where it is no IP). */
  readonly ip: string;
  /** creationTimestamp: of two IPAddresses of one IP the earlier (then the smaller name) is its address. */
  readonly created: string;
  readonly className: string;
  readonly deleting: boolean;
  readonly phase?: string;
  readonly claimRef?: { readonly namespace: string; readonly name: string; readonly uid?: string };
  readonly associatedTo?: HolderView;
  /** The other carriers of a Shared claim's address, in the order they joined. */
  readonly sharedWith?: readonly HolderView[];
}

export interface ServiceView {
  readonly namespace: string;
  readonly name: string;
  readonly type: string;
  readonly deleting: boolean;
  /** The claim annotation. */
  readonly claim?: string;
  readonly pin?: string;
  /** The driver's marker of its own pin. */
  readonly pinned: boolean;
  /** creationTimestamp (ISO): the oldest admitted Service naming a claim carries it. */
  readonly created: string;
  /** spec.loadBalancerClass. */
  readonly lbClass?: string;
  /** Its IP families as MetalLB reads them: spec.ipFamilies, else those of its cluster IPs. */
  readonly families: readonly Family[];
  /** spec.ports as MetalLB's allocator keys them: `protocol/port`, TCP when unset. */
  readonly ports: readonly string[];
  /** MetalLB's backend key: the selector (`k=v,...`, keys sorted) under externalTrafficPolicy Local, else empty. */
  readonly backend: string;
  /** The driver's `local.sdn.cozystack.io/Attached` condition in its status. */
  readonly attached?: ConditionView;
  /** In the driver's namespace: the IPAddress its link label names. */
  readonly link?: string;
  readonly placeholder: boolean;
  /** status.loadBalancer.ingress IPs, canonical. */
  readonly ingress: readonly string[];
}

export interface ClassView {
  readonly name: string;
  readonly addresses: readonly string[];
  readonly loadBalancerClass?: string;
}

/** An IPAddressPool in MetalLB's namespace, whoever wrote it. */
export interface PoolView {
  readonly name: string;
  readonly addresses: readonly string[];
}

export interface Snapshot {
  readonly claims: readonly ClaimView[];
  readonly addresses: readonly AddressView[];
  readonly services: readonly ServiceView[];
  readonly classes: readonly ClassView[];
  readonly pools: readonly PoolView[];
}

/** MetalLB's namespace on the e2e platform (startPlatform). */
const METALLB_NAMESPACE = 'cozy-metallb';

const canonical = (ip: string) => canonicalIp(ip) ?? ip;
const byKey = <T extends { namespace?: string; name: string }>(a: T, b: T) =>
  ordinal(`${a.namespace ?? ''}/${a.name}`, `${b.namespace ?? ''}/${b.name}`);

function conditionView(conditions: unknown, type: string): ConditionView | undefined {
  const c = ((conditions ?? []) as { type: string; status: string; reason?: string }[]).find((x) => x.type === type);
  return c ? { status: c.status, reason: c.reason ?? '' } : undefined;
}

const createdText = (at: string | Date | undefined) => (at ? new Date(at).toISOString() : '\uffff'); // none: last, as the controllers order it

const holderView = (h: HolderView): HolderView => ({ kind: h.kind, namespace: h.namespace, name: h.name });

/** associatedTo and sharedWith of a status as written (an empty sharedWith reads as none). */
function holdersView(status: Record<string, unknown> | undefined): Pick<ClaimView, 'associatedTo' | 'sharedWith'> {
  const to = status?.associatedTo as HolderView | undefined;
  const shared = (status?.sharedWith ?? []) as HolderView[];
  return { ...(to ? { associatedTo: holderView(to) } : {}), ...(shared.length > 0 ? { sharedWith: shared.map(holderView) } : {}) };
}

export function claimView(c: Cr): ClaimView {
  const attached = conditionView(c.status?.conditions, CLAIM_ATTACHED);
  const listed = ((c.status?.addresses ?? []) as { name: string }[]).map((a) => a.name);
  return {
    namespace: c.metadata.namespace!,
    name: c.metadata.name!,
    uid: c.metadata.uid!,
    deleting: Boolean(c.metadata.deletionTimestamp),
    phase: c.status?.phase,
    className: c.status?.className || c.spec.className,
    family: c.spec.family,
    sharing: c.spec.sharing === 'Shared' ? 'Shared' : 'Exclusive',
    addresses: [...listed].sort(),
    addressOrder: listed,
    ...holdersView(c.status),
    ...(attached ? { attached } : {}),
  };
}

export function addressView(a: Cr): AddressView {
  const ref = a.spec.claimRef as AddressView['claimRef'];
  return {
    name: a.metadata.name!,
    uid: a.metadata.uid!,
    ip: canonical(a.spec.address),
    created: createdText(a.metadata.creationTimestamp),
    className: a.spec.className,
    deleting: Boolean(a.metadata.deletionTimestamp),
    phase: a.status?.phase,
    ...(ref ? { claimRef: { namespace: ref.namespace, name: ref.name, ...(ref.uid ? { uid: ref.uid } : {}) } } : {}),
    ...holdersView(a.status),
  };
}

export function serviceView(s: k8s.V1Service): ServiceView {
  const annotations = s.metadata?.annotations ?? {};
  const placeholder = s.metadata?.namespace === PLACEHOLDERS;
  const link = placeholder ? s.metadata?.labels?.[LINK_LABEL] : undefined;
  const declared = (s.spec?.ipFamilies ?? []).filter((f): f is Family => f === 'IPv4' || f === 'IPv6');
  const clusterIps = s.spec?.clusterIPs?.length ? s.spec.clusterIPs : s.spec?.clusterIP ? [s.spec.clusterIP] : [];
  const families = declared.length > 0 ? declared : clusterIps.map((ip) => familyOf(ip)).filter((f): f is Family => f !== undefined);
  // The REST client hands conditions over as parsed JSON.
  const attached = conditionView(s.status?.conditions, SERVICE_ATTACHED);
  const selector = Object.entries(s.spec?.selector ?? {}).sort(([a], [b]) => ordinal(a, b));
  return {
    namespace: s.metadata!.namespace!,
    name: s.metadata!.name!,
    type: s.spec?.type ?? 'ClusterIP',
    deleting: Boolean(s.metadata?.deletionTimestamp),
    ...(annotations[CLAIM_ANNOTATION] !== undefined ? { claim: annotations[CLAIM_ANNOTATION] } : {}),
    ...(annotations[METALLB_PIN] !== undefined ? { pin: annotations[METALLB_PIN] } : {}),
    pinned: annotations[PINNED_MARKER] === 'true',
    created: createdText(s.metadata?.creationTimestamp),
    ...(s.spec?.loadBalancerClass ? { lbClass: s.spec.loadBalancerClass } : {}),
    families,
    ports: (s.spec?.ports ?? []).map((p) => `${p.protocol ?? 'TCP'}/${p.port}`),
    backend: s.spec?.externalTrafficPolicy === 'Local' ? selector.map(([k, v]) => `${k}=${v}`).join(',') : '',
    ...(attached ? { attached } : {}),
    ...(link ? { link } : {}),
    placeholder,
    ingress: (s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip).filter((ip): ip is string => Boolean(ip)).map(canonical).sort(),
  };
}

export async function readSnapshot(admin: Platform['admin']): Promise<Snapshot> {
  const [claims, addresses, classes, services, pools] = await Promise.all([
    admin.custom.listClusterCustomObject(crd('ipaddressclaims')) as Promise<{ items: Cr[] }>,
    admin.custom.listClusterCustomObject(crd('ipaddresses')) as Promise<{ items: Cr[] }>,
    admin.custom.listClusterCustomObject(crd('ipaddressclasses')) as Promise<{ items: Cr[] }>,
    admin.core.listServiceForAllNamespaces(),
    admin.custom.listNamespacedCustomObject({ group: 'metallb.io', version: 'v1beta1', namespace: METALLB_NAMESPACE, plural: 'ipaddresspools' }) as Promise<{ items: Cr[] }>,
  ]);
  return {
    claims: claims.items.map(claimView).sort(byKey),
    addresses: addresses.items.map(addressView).sort(byKey),
    services: services.items.map(serviceView).sort(byKey),
    classes: classes.items
      .map((c) => ({
        name: c.metadata.name!,
        addresses: [...((c.spec.parameters?.addresses ?? []) as string[])],
        ...(c.spec.loadBalancerClass ? { loadBalancerClass: c.spec.loadBalancerClass as string } : {}),
      }))
      .sort(byKey),
    pools: pools.items.map((p) => ({ name: p.metadata.name!, addresses: [...((p.spec?.addresses ?? []) as string[])] })).sort(byKey),
  };
}

/** Changes exactly when something a check reads changes (not on Events, condition times or resourceVersions). */
export function fingerprint(snapshot: Snapshot): string {
  return JSON.stringify(snapshot);
}
