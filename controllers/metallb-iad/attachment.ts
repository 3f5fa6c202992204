/**
 * The association's verdict, said where each side looks without Events
 * (docs/driver.md, "The verdict"): on the Service, the condition
 * `local.sdn.cozystack.io/Attached` in its status.conditions (MetalLB writes
 * only status.loadBalancer and sends the rest back as it read it); on the
 * claim, `status.associatedTo` and the condition `Attached`. Pure: reads the
 * caches through the association rule and says what the status should be.
 */
import type { V1Service } from '@kubernetes/client-node';
import { nextCondition, type AssociatedTo, type Condition, type IPAddress, type IPAddressClaim } from '../../api/v1alpha1/index.js';
import { familyOf } from '../../api/ip.js';
import { associationVerdict, judgingOrder, type AssociationReader, type Verdict } from './association.js';
import { ATTACHED_REASON } from './well-known.js';

export type Said = Pick<Condition, 'status' | 'reason' | 'message'>;

/** The part of a Dual claim a single-stack Service leaves held, said in a clause. */
function heldClause(claim: IPAddressClaim, carried: readonly IPAddress[]): string {
  const carriedNames = new Set(carried.map((a) => a.metadata.name));
  const held = (claim.status?.addresses ?? []).filter((a) => !carriedNames.has(a.name));
  if (held.length === 0) {
    return '';
  }
  const what = held.map((a) => `${a.address} (${familyOf(a.address) ?? 'unknown family'})`).join(', ');
  return `; ${what} stays held: a dual-stack Service carries it too`;
}

/** What the Service's Attached condition says; undefined when it names no claim of this driver (no condition). */
export function serviceAttachment(verdict: Verdict): Said | undefined {
  if (verdict.ok) {
    const ips = verdict.addresses.map((a) => a.spec.address).join(', ');
    return { status: 'True', reason: ATTACHED_REASON, message: `carries ${ips} of IPAddressClaim ${verdict.claim.metadata.name}${heldClause(verdict.claim, verdict.addresses)}` };
  }
  return verdict.refusal ? { status: 'False', reason: verdict.refusal.reason, message: verdict.refusal.message } : undefined;
}

/** At most this many other Services are named in a claim's condition; the rest are counted. */
const NAMED_AT_MOST = 5;

function others(refused: readonly { service: V1Service; reason: string }[]): string {
  const named = refused.slice(0, NAMED_AT_MOST).map((r) => `Service ${r.service.metadata!.name} gets nothing (${r.reason})`);
  const more = refused.length - named.length;
  return named.join('; ') + (more > 0 ? `; and ${more} more Service${more > 1 ? 's' : ''}` : '');
}

export interface ClaimAttachment {
  /** The Services that carry the claim's addresses, in the rule's order (several only for a Shared claim). */
  readonly carriers: readonly AssociatedTo[];
  /** Undefined when no Service names the claim: a reserved claim is quiet. */
  readonly condition?: Said;
}

/**
 * What the claim's status says of the Services naming it: which carry its
 * addresses (the rule's winner; for a Shared claim every Service it admits)
 * and why each other gets nothing; when none carries them, the oldest's
 * reason leads.
 */
export function claimAttachment(cluster: AssociationReader, claim: IPAddressClaim): ClaimAttachment {
  const namespace = claim.metadata.namespace!;
  const order = judgingOrder(cluster, claim);
  const naming = cluster
    .servicesForClaim(namespace, claim.metadata.name!)
    .map((service) => ({ service, verdict: associationVerdict(cluster, service) }))
    .filter(({ verdict }) => verdict.ok || verdict.refusal) // deleting, or another driver's claim: not ours to say
    .sort((a, b) => order(a.service, b.service));
  if (naming.length === 0) {
    return { carriers: [] };
  }
  const carrying = naming.filter(({ verdict }) => verdict.ok);
  const refused = naming.filter((n) => !n.verdict.ok).map(({ service, verdict }) => ({ service, reason: verdict.ok ? '' : verdict.refusal!.reason, message: verdict.ok ? '' : verdict.refusal!.message }));
  if (carrying.length > 0) {
    const carried = carrying.map(({ service, verdict }) => {
      const addresses = verdict.ok ? verdict.addresses : [];
      return `Service ${service.metadata!.name} carries ${addresses.map((a) => a.spec.address).join(', ')}${heldClause(claim, addresses)}`;
    });
    const rest = refused.length > 0 ? `; ${others(refused)}` : '';
    return {
      carriers: carrying.map(({ service }) => ({ kind: 'Service', namespace, name: service.metadata!.name! })),
      condition: { status: 'True', reason: ATTACHED_REASON, message: `${carried.join('; ')}${rest}` },
    };
  }
  const [first, ...rest] = refused as [(typeof refused)[number], ...typeof refused]; // naming is not empty and has no carrier
  const message = `Service ${first.service.metadata!.name}: ${first.message}${rest.length > 0 ? `; ${others(rest)}` : ''}`;
  return { carriers: [], condition: { status: 'False', reason: first.reason, message } };
}

/** Whether a status's condition of this type already says `said` (or, for undefined, is absent). */
export function saysAlready(conditions: readonly Condition[] | undefined, type: string, said: Said | undefined): boolean {
  const current = conditions?.find((c) => c.type === type);
  return said === undefined ? current === undefined : current?.status === said.status && current.reason === said.reason && current.message === said.message;
}

/** The conditions with this type's set to `said` (kept transition time while its status holds), or removed. */
export function withCondition(conditions: readonly Condition[] | undefined, type: string, said: Said | undefined, now: string, generation?: number): Condition[] {
  const others = (conditions ?? []).filter((c) => c.type !== type);
  return said ? [...others, nextCondition(conditions, { type, ...said }, now, generation)] : others;
}
