/**
 * The world a history plays in: classes over documentation ranges only, the
 * tenant namespaces, the admin's namespace, and small pools of names so that
 * names are reused within a history and across histories.
 */
import type { Platform } from '../platform.js';
import { createClass } from '../platform.js';

/**
 * Dual-stack ClusterIPs (so IPv6 and dual-stack Services exist), from documentation ranges and
 * apart from every class below: nothing leaves loopback, but no other range is even named.
 */
export const SERVICE_CIDRS = '198.51.100.0/24,2001:db8:ffff::/112';

export type ClaimFamily = 'IPv4' | 'IPv6' | 'Dual';

export interface HistoryClass {
  readonly name: string;
  readonly addresses: readonly string[];
  readonly reclaimPolicy: 'Retain' | 'Delete';
  /** The families a claim of this class may ask for. */
  readonly families: readonly ClaimFamily[];
}

/**
 * Small on purpose: exhaustion and reuse happen within 100 operations. The Retain classes keep
 * the Released addresses of deleted claims until the admin deletes them (an operation below).
 */
export const CLASSES: readonly HistoryClass[] = [
  { name: 'h-v4', addresses: ['203.0.113.0/29'], reclaimPolicy: 'Delete', families: ['IPv4'] },
  { name: 'h-v4-retain', addresses: ['203.0.113.8/30'], reclaimPolicy: 'Retain', families: ['IPv4'] },
  { name: 'h-v6', addresses: ['2001:db8::/125'], reclaimPolicy: 'Delete', families: ['IPv6'] },
  { name: 'h-dual', addresses: ['203.0.113.16/29', '2001:db8::100/125'], reclaimPolicy: 'Retain', families: ['IPv4', 'IPv6', 'Dual'] },
];

/** Tenant namespaces (fenced by the admission policy: `tenant-*`); startPlatform makes the first two. */
export const TENANTS = ['tenant-a', 'tenant-b'] as const;
/** Where the admin pins Services by hand: not a tenant namespace, so the fence does not apply. */
export const ADMIN_NAMESPACE = 'ops';

export const CLAIM_NAMES = ['web', 'db', 'api', 'cache', 'edge'] as const;
export const SERVICE_NAMES = ['svc-1', 'svc-2', 'svc-3', 'svc-4'] as const;
/** Claim names no claim ever has: a Service may point at one. */
export const MISSING_CLAIM = 'ghost';

export const CLAIM_ANNOTATION = 'local.sdn.cozystack.io/ip-address-claim';
export const METALLB_PIN = 'metallb.io/loadBalancerIPs';

/** Creates the classes and the admin's namespace on a fresh platform. */
export async function setUpWorld(platform: Platform): Promise<void> {
  await platform.admin.core.createNamespace({ body: { metadata: { name: ADMIN_NAMESPACE } } });
  for (const c of CLASSES) {
    await createClass(platform.admin, c.name, [...c.addresses], c.reclaimPolicy);
  }
}
