/**
 * Who may draw from a class (docs/access.md): the class's namespaceSelector,
 * matched against a namespace's labels as Kubernetes matches a LabelSelector,
 * and what counts against its maxClaimsPerNamespace. The core judges claims
 * with these; the admission policy says the same selector in CEL
 * (constructs/packages/class-access-policy.ts), and test/api pins the two to
 * one behaviour.
 */
import { BOUND_REASON, CONDITION } from './conditions.js';
import type { IPAddressClaim, IPAddressClass } from './types.js';
import type { NamespaceSelector } from './schema/ipaddressclass.js';

export type { NamespaceSelector };

/** Whether the selector picks a namespace with these labels; no selector picks every namespace. */
export function selects(selector: NamespaceSelector | undefined, labels: Readonly<Record<string, string>>): boolean {
  if (!selector) {
    return true;
  }
  const has = (key: string) => Object.prototype.hasOwnProperty.call(labels, key);
  const matchLabels = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => has(key) && labels[key] === value);
  return (
    matchLabels &&
    (selector.matchExpressions ?? []).every((e) => {
      const values = e.values ?? [];
      switch (e.operator) {
        case 'In':
          return has(e.key) && values.includes(labels[e.key]!);
        case 'NotIn':
          return !has(e.key) || !values.includes(labels[e.key]!);
        case 'Exists':
          return has(e.key);
        case 'DoesNotExist':
          return !has(e.key);
        default:
          return false; // an operator the CRD refuses: selects nothing, as the apiserver's own parser would fail closed
      }
    })
  );
}

/** The selector in kubectl's syntax (`tier=premium,region in (eu,us),!legacy`), for messages. */
export function selectorText(selector: NamespaceSelector | undefined): string {
  if (!selector) {
    return 'every namespace';
  }
  const parts = [
    ...Object.entries(selector.matchLabels ?? {}).map(([key, value]) => `${key}=${value}`),
    ...(selector.matchExpressions ?? []).map((e) => {
      switch (e.operator) {
        case 'In':
          return `${e.key} in (${(e.values ?? []).join(',')})`;
        case 'NotIn':
          return `${e.key} notin (${(e.values ?? []).join(',')})`;
        case 'Exists':
          return e.key;
        default:
          return `!${e.key}`;
      }
    }),
  ];
  return parts.length === 0 ? 'every namespace' : parts.join(',');
}

/** Whether the class lets a namespace with these labels draw from it. */
export function classAllows(ipClass: IPAddressClass, namespaceLabels: Readonly<Record<string, string>>): boolean {
  return selects(ipClass.spec.namespaceSelector, namespaceLabels);
}

/**
 * Whether a claim, by its status alone, holds a place under its class's
 * per-namespace limit: it holds addresses (Bound, Lost, or any recorded), or
 * the core let its driver provision it (WaitingForProvisioning). A claim the
 * core refused (class not found, not allowed, over the limit, bad family)
 * holds none. A claim being deleted keeps its place until it is gone, so the
 * namespace never holds one over the limit while its addresses are let go.
 */
export function holdsPlace(claim: IPAddressClaim): boolean {
  const status = claim.status;
  if (!status) {
    return false;
  }
  if (status.phase === 'Bound' || status.phase === 'Lost' || (status.addresses?.length ?? 0) > 0) {
    return true;
  }
  const bound = status.conditions?.find((c) => c.type === CONDITION.bound);
  return bound?.reason === BOUND_REASON.waitingForProvisioning;
}
