/**
 * What adoption does, decided from what the cluster holds and nothing else
 * (docs/adoption.md): for each selected LoadBalancer Service, the IPAddresses,
 * the generated claim and the association that make it look as if it had been
 * attached through the claim annotation; or the refusals, one line each, when
 * any Service cannot be adopted (then nothing at all is written). Undo's plan
 * is here too. Pure: the command (command.ts) reads and writes.
 */
import type { V1ResourceQuota, V1Service } from '@kubernetes/client-node';
import {
  GROUP,
  IP_ADDRESS_CLAIM_ANNOTATION,
  METALLB_PROVISIONER,
  type IPAddress,
  type IPAddressClaim,
  type IPAddressClass,
} from '../../../api/v1alpha1/index.js';
import { compareIps, familyOf, parseRange, rangeContains, type Family, type IpRange } from '../../../api/ip.js';
import { serviceFamilies } from '../association.js';
import { backingPoolName } from '../class-parameters.js';
import { ipObjectName } from '../names.js';
import { ingressIps, pinnedAs } from '../services.js';
import type { MetallbObject } from '../store.js';
import { CARRIER_LABEL, PIN_ANNOTATION, PINNED_ANNOTATION, SERVED_BY_CLASS_ANNOTATION } from '../well-known.js';

/** On the IPAddresses and claims adoption makes, value "true": what undo removes, and nothing else. */
export const ADOPTED_LABEL = `${METALLB_PROVISIONER}/adopted`;
/** On the same objects: the Service adopted, `namespace/name`. */
export const ADOPTED_FROM_ANNOTATION = `${METALLB_PROVISIONER}/adopted-from`;
/** On the IPAddresses: the Service's values, before adoption, of every key adoption changes (JSON, ServiceKeys). */
export const SERVICE_BEFORE_ANNOTATION = `${METALLB_PROVISIONER}/service-before-adoption`;
/** The quota resource that counts claims (a stock ResourceQuota, object count). */
export const CLAIM_QUOTA_RESOURCE = `count/ipaddressclaims.${GROUP}`;

/** The Service's annotations and labels that adoption (through the driver) changes. */
const ANNOTATION_KEYS = [IP_ADDRESS_CLAIM_ANNOTATION, PIN_ANNOTATION, PINNED_ANNOTATION] as const;
const LABEL_KEYS = [CARRIER_LABEL] as const;

/** A Service's values of those keys; null where the key was absent. */
export interface ServiceKeys {
  readonly annotations: Record<string, string | null>;
  readonly labels: Record<string, string | null>;
}

export type ClaimFamily = Family | 'Dual';

export interface ServiceAdoption {
  readonly namespace: string;
  readonly name: string;
  /** The generated claim: the Service's own name, in its namespace. */
  readonly claimName: string;
  readonly family: ClaimFamily;
  /** The Service's IPs, sorted as the driver pins them, and their IPAddress names. */
  readonly ips: readonly string[];
  readonly addressNames: readonly string[];
  /** What undo puts back. */
  readonly before: ServiceKeys;
  /** Every object is in place, the Service names its claim and the driver has pinned it: nothing left to do. */
  readonly complete: boolean;
}

export interface AdoptionWorld {
  readonly className: string;
  readonly poolName: string;
  readonly metallbNamespace: string;
  readonly pool: MetallbObject | undefined;
  readonly ipClass: IPAddressClass | undefined;
  /** The selected Services, as listed (each once). */
  readonly services: readonly V1Service[];
  readonly claim: (namespace: string, name: string) => IPAddressClaim | undefined;
  readonly address: (name: string) => IPAddress | undefined;
  /** The ResourceQuotas of a namespace. */
  readonly quotas: (namespace: string) => readonly V1ResourceQuota[];
}

export type AdoptionPlan =
  | { readonly ok: true; readonly createClass: boolean; readonly adoptions: readonly ServiceAdoption[] }
  | { readonly ok: false; readonly refusals: readonly string[] };

/**
 * The IPs a Service holds, each once and in the driver's pin order. MetalLB writes a dual-stack
 * Service's ingress in no fixed order (IPv6 first in some runs), so every comparison goes by this.
 */
export function heldIps(service: V1Service): string[] {
  return [...new Set(ingressIps(service))].sort(compareIps);
}

const serviceId = (s: V1Service) => `${s.metadata?.namespace}/${s.metadata?.name}`;

/** The class adoption makes: served by metallb-iad, taking the pool over, reclaim Retain. */
export function adoptionClass(className: string, poolName: string): IPAddressClass {
  return {
    apiVersion: `${GROUP}/v1alpha1`,
    kind: 'IPAddressClass',
    metadata: { name: className, labels: { [ADOPTED_LABEL]: 'true' } },
    spec: { provisioner: METALLB_PROVISIONER, reclaimPolicy: 'Retain', parameters: { pool: poolName } },
  };
}

/** The pool's ranges, or a refusal line. */
function poolRanges(world: AdoptionWorld): IpRange[] | string {
  const { pool, poolName, metallbNamespace, className } = world;
  if (!pool) {
    return `IPAddressPool ${metallbNamespace}/${poolName} not found`;
  }
  const owner = (pool.metadata.ownerReferences ?? []).find((o) => o.kind === 'IPAddressClass');
  if (owner) {
    return `IPAddressPool ${poolName} is IPAddressClass ${owner.name}'s own pool; its addresses are in the claim model already`;
  }
  const servedBy = pool.metadata.annotations?.[SERVED_BY_CLASS_ANNOTATION];
  if (servedBy && servedBy !== className) {
    return `IPAddressPool ${poolName} is served by IPAddressClass ${servedBy} already; adopt with --class ${servedBy}`;
  }
  const ranges: IpRange[] = [];
  for (const text of pool.spec?.addresses ?? []) {
    const range = parseRange(text);
    if (typeof range === 'string') {
      return `IPAddressPool ${poolName} spec.addresses: ${range}`;
    }
    ranges.push(range);
  }
  return ranges;
}

/** Whether an existing class is the one adoption would make (a takeover of this pool by metallb-iad). */
function classProblem(world: AdoptionWorld): string | undefined {
  const { ipClass, className, poolName } = world;
  if (!ipClass) {
    return undefined;
  }
  if (ipClass.metadata.deletionTimestamp) {
    return `IPAddressClass ${className} is being deleted; wait for it to go, then adopt again`;
  }
  if (ipClass.spec.provisioner !== METALLB_PROVISIONER || (ipClass.spec.parameters as { pool?: unknown } | undefined)?.pool !== poolName) {
    return `IPAddressClass ${className} exists and does not take over pool ${poolName} (provisioner ${ipClass.spec.provisioner}, pool ${backingPoolName(ipClass)}); choose another --class`;
  }
  return undefined;
}

function keysOf(service: V1Service): ServiceKeys {
  const pick = (from: Record<string, string> | undefined, keys: readonly string[]) =>
    Object.fromEntries(keys.map((k) => [k, from?.[k] ?? null]));
  return { annotations: pick(service.metadata?.annotations, ANNOTATION_KEYS), labels: pick(service.metadata?.labels, LABEL_KEYS) };
}

/** Marked as made by adoption for this Service. */
function adoptedFrom(object: IPAddress | IPAddressClaim | undefined, id: string): boolean {
  return object?.metadata.labels?.[ADOPTED_LABEL] === 'true' && object.metadata.annotations?.[ADOPTED_FROM_ANNOTATION] === id;
}

/** One Service: its adoption, or why not. */
function planService(world: AdoptionWorld, ranges: readonly IpRange[], service: V1Service): ServiceAdoption | string {
  const id = serviceId(service);
  const namespace = service.metadata!.namespace!;
  const name = service.metadata!.name!;
  const type = service.spec?.type ?? 'ClusterIP';
  if (type !== 'LoadBalancer') {
    return `${id}: type ${type}, not LoadBalancer: it holds no address to adopt`;
  }
  if (service.metadata?.deletionTimestamp) {
    return `${id}: being deleted`;
  }
  const ips = heldIps(service);
  if (ips.length === 0) {
    return `${id}: has no address yet (status.loadBalancer.ingress is empty)`;
  }
  const outside = ips.filter((ip) => !ranges.some((r) => rangeContains(r, ip)));
  if (outside.length > 0) {
    return `${id}: holds ${outside.join(', ')}, outside pool ${world.poolName}; IPAddressClass ${world.className} cannot serve it`;
  }
  const families = ips.map((ip) => familyOf(ip)!);
  if (new Set(families).size !== families.length) {
    return `${id}: holds ${ips.join(', ')}, more than one address of a family; a claim holds one per family`;
  }
  const declared = serviceFamilies(service);
  if (declared.length !== families.length || !families.every((f) => declared.includes(f))) {
    return `${id}: holds ${families.join(' and ')} but spec.ipFamilies is ${declared.join(',') || 'empty'}; the driver pins only a Service whose families match its claim`;
  }
  const claimName = name;
  const claim = world.claim(namespace, claimName);
  const named = service.metadata?.annotations?.[IP_ADDRESS_CLAIM_ANNOTATION];
  if (named && !(named === claimName && adoptedFrom(claim, id))) {
    return `${id}: already attached through IPAddressClaim ${namespace}/${named} (annotation ${IP_ADDRESS_CLAIM_ANNOTATION})`;
  }
  if (claim && !adoptedFrom(claim, id)) {
    return `${id}: IPAddressClaim ${namespace}/${claimName} exists and was not made by adopting this Service; rename or delete it first`;
  }
  const addressNames = ips.map(ipObjectName);
  const addresses = addressNames.map((n) => world.address(n));
  for (const [i, address] of addresses.entries()) {
    if (address && !adoptedFrom(address, id)) {
      const ref = address.spec.claimRef;
      const holder = ref ? `bound to IPAddressClaim ${ref.namespace}/${ref.name}` : `of class ${address.spec.className}`;
      return `${id}: ${ips[i]} is recorded already as IPAddress ${addressNames[i]} (${holder})`;
    }
  }
  // A rerun after an interrupted one: what the first run recorded stands.
  const recorded = addresses.find((a) => a?.metadata.annotations?.[SERVICE_BEFORE_ANNOTATION]);
  const before = recorded ? (JSON.parse(recorded.metadata.annotations![SERVICE_BEFORE_ANNOTATION]!) as ServiceKeys) : keysOf(service);
  const family: ClaimFamily = families.length === 2 ? 'Dual' : families[0]!;
  // Done only once the driver has pinned it: a rerun after a run cut short waits for that too.
  const complete =
    named === claimName && Boolean(claim) && addresses.every((a) => a?.status?.associatedTo?.name === name) && pinnedAs(service, ips.join(','));
  return { namespace, name, claimName, family, ips, addressNames, before, complete };
}

/** Claims each namespace's quota still admits, against the new ones adoption makes there. */
function quotaRefusals(world: AdoptionWorld, adoptions: readonly ServiceAdoption[]): string[] {
  const fresh = new Map<string, number>();
  for (const a of adoptions.filter((a) => !world.claim(a.namespace, a.claimName))) {
    fresh.set(a.namespace, (fresh.get(a.namespace) ?? 0) + 1);
  }
  const refusals: string[] = [];
  for (const [namespace, count] of [...fresh].sort(([a], [b]) => a.localeCompare(b))) {
    for (const quota of world.quotas(namespace)) {
      if (quota.spec?.hard?.[CLAIM_QUOTA_RESOURCE] === undefined) {
        continue;
      }
      const hard = quota.status?.hard?.[CLAIM_QUOTA_RESOURCE];
      if (hard === undefined || quota.status?.used?.[CLAIM_QUOTA_RESOURCE] === undefined) {
        // The apiserver refuses every claim in the namespace until the quota controller has counted.
        refusals.push(`${namespace}: ResourceQuota ${quota.metadata?.name} has not been counted yet (its status has no usage of claims yet); adopt again in a moment`);
        continue;
      }
      const left = Number(hard) - Number(quota.status!.used![CLAIM_QUOTA_RESOURCE]);
      if (count > left) {
        refusals.push(
          `${namespace}: ${count} claim${count === 1 ? '' : 's'} to adopt, but ResourceQuota ${quota.metadata?.name} admits ${Math.max(left, 0)} more (${CLAIM_QUOTA_RESOURCE}: ${hard})`,
        );
      }
    }
  }
  return refusals;
}

/** The whole adoption, or every refusal: one bad Service refuses them all, so nothing is half done. */
export function planAdoption(world: AdoptionWorld): AdoptionPlan {
  const classLine = classProblem(world);
  const ranges = poolRanges(world);
  const refusals = [classLine, typeof ranges === 'string' ? ranges : undefined].filter((l): l is string => Boolean(l));
  if (refusals.length > 0) {
    return { ok: false, refusals };
  }
  if (world.services.length === 0) {
    return { ok: false, refusals: ['no Service selected'] };
  }
  const adoptions: ServiceAdoption[] = [];
  const ipOwners = new Map<string, string>();
  for (const service of world.services) {
    const outcome = planService(world, ranges as IpRange[], service);
    if (typeof outcome === 'string') {
      refusals.push(outcome);
      continue;
    }
    for (const ip of outcome.ips) {
      const other = ipOwners.get(ip);
      if (other) {
        refusals.push(`${serviceId(service)}: ${ip} is held by ${other} too; MetalLB shares it (allow-shared-ip), and adoption makes one claim per Service, never a Shared claim for several (docs/adoption.md)`);
      }
      ipOwners.set(ip, serviceId(service));
    }
    adoptions.push(outcome);
  }
  refusals.push(...quotaRefusals(world, adoptions));
  return refusals.length > 0 ? { ok: false, refusals } : { ok: true, createClass: !world.ipClass, adoptions };
}

/** The Service as it was: the recorded keys put back (null: removed). Null when nothing differs. */
export function restoredKeys(service: V1Service, before: ServiceKeys): V1Service | null {
  const annotations: Record<string, string> = { ...service.metadata?.annotations };
  const labels: Record<string, string> = { ...service.metadata?.labels };
  let changed = false;
  const put = (into: Record<string, string>, values: Record<string, string | null>) => {
    for (const [key, value] of Object.entries(values)) {
      if ((into[key] ?? null) === value) {
        continue;
      }
      changed = true;
      if (value === null) {
        delete into[key];
      } else {
        into[key] = value;
      }
    }
  };
  put(annotations, before.annotations);
  put(labels, before.labels);
  return changed ? { ...service, metadata: { ...service.metadata, annotations, labels } } : null;
}

/** Keys a Service that adoption did not record carries through a moved adopted claim: all of them go. */
export const NO_KEYS: ServiceKeys = {
  annotations: Object.fromEntries(ANNOTATION_KEYS.map((k) => [k, null])),
  labels: Object.fromEntries(LABEL_KEYS.map((k) => [k, null])),
};

export interface UndoWorld {
  readonly className: string;
  readonly ipClass: IPAddressClass | undefined;
  /** Every IPAddress of the class. */
  readonly addresses: readonly IPAddress[];
  readonly service: (namespace: string, name: string) => V1Service | undefined;
}

export interface ServiceRestore {
  readonly namespace: string;
  readonly name: string;
  readonly before: ServiceKeys;
}

export type UndoPlan =
  | {
      readonly ok: true;
      readonly deleteClass: boolean;
      readonly restores: readonly ServiceRestore[];
      readonly claims: readonly { namespace: string; name: string }[];
      readonly addresses: readonly string[];
    }
  | { readonly ok: false; readonly refusals: readonly string[] };

/**
 * Undo of a whole class: refused while the class holds an address adoption did
 * not make (deleting the class would leave its reservation unheld). Each
 * Service an adopted address is associated with gets its recorded keys back;
 * one the tenant attached the claim to since loses the adoption's keys.
 */
export function planUndo(world: UndoWorld): UndoPlan {
  const { className, ipClass, addresses } = world;
  if (ipClass && ipClass.metadata.labels?.[ADOPTED_LABEL] !== 'true') {
    return { ok: false, refusals: [`IPAddressClass ${className} was not made by adoption; undo removes only what adoption made`] };
  }
  const foreign = addresses.filter((a) => a.metadata.labels?.[ADOPTED_LABEL] !== 'true').map((a) => a.metadata.name!);
  if (foreign.length > 0) {
    return {
      ok: false,
      refusals: [`IPAddressClass ${className} holds ${foreign.length} address${foreign.length === 1 ? '' : 'es'} adoption did not make (${foreign.slice(0, 5).join(', ')}${foreign.length > 5 ? ', …' : ''}); release them first`],
    };
  }
  // Only a Service that still names the adopted claim is touched: one the tenant has since
  // pointed at a claim of its own keeps what the tenant gave it.
  const restores = new Map<string, ServiceRestore>();
  const namesClaim = (id: string | undefined, claimName: string | undefined) => {
    const [namespace, name] = (id ?? '').split('/') as [string, string];
    const service = id && claimName ? world.service(namespace, name) : undefined;
    return service?.metadata?.annotations?.[IP_ADDRESS_CLAIM_ANNOTATION] === claimName ? { namespace, name } : undefined;
  };
  for (const address of addresses) {
    const claimName = address.spec.claimRef?.name;
    const from = address.metadata.annotations?.[ADOPTED_FROM_ANNOTATION];
    const recorded = address.metadata.annotations?.[SERVICE_BEFORE_ANNOTATION];
    const original = namesClaim(from, claimName);
    if (original && recorded) {
      restores.set(from!, { ...original, before: JSON.parse(recorded) as ServiceKeys });
    }
    const to = address.status?.associatedTo;
    const at = to?.kind === 'Service' ? `${to.namespace}/${to.name}` : undefined;
    const moved = at !== from && !restores.has(at ?? '') ? namesClaim(at, claimName) : undefined;
    if (moved) {
      restores.set(at!, { ...moved, before: NO_KEYS });
    }
  }
  const claims = new Map<string, { namespace: string; name: string }>();
  for (const ref of addresses.map((a) => a.spec.claimRef).filter((r) => r !== undefined)) {
    claims.set(`${ref.namespace}/${ref.name}`, { namespace: ref.namespace, name: ref.name });
  }
  return {
    ok: true,
    deleteClass: Boolean(ipClass),
    restores: [...restores.values()],
    claims: [...claims.values()],
    addresses: addresses.map((a) => a.metadata.name!).sort(),
  };
}
