/**
 * The world a history plays in: classes over documentation ranges only, the
 * tenant namespaces, the admin's namespace, and small pools of names so that
 * names are reused within a history and across histories.
 */
import type { MetallbController, Platform } from '../platform.js';
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
  /** spec.loadBalancerClass: the Services carrying the class's addresses must be of it (a MetalLB started with --lb-class serves them). */
  readonly loadBalancerClass?: string;
}

/**
 * The load-balancer class of the class `h-lb`, served by a second MetalLB controller started with
 * `--lb-class` (the platform's serves only Services without a class); and one no class declares
 * and no MetalLB serves, which a tenant may still write on a Service (it is only refused).
 */
export const LB_CLASS = 'histories.e2e/lb';
export const OTHER_LB_CLASS = 'histories.e2e/other';
/** What a Service may say in spec.loadBalancerClass (undefined: none). */
export const LB_CLASSES: readonly (string | undefined)[] = [undefined, LB_CLASS, OTHER_LB_CLASS];

/**
 * Small on purpose: exhaustion and reuse happen within 100 operations. The Retain classes keep
 * the Released addresses of deleted claims until the admin deletes them (an operation below).
 */
export const CLASSES: readonly HistoryClass[] = [
  { name: 'h-v4', addresses: ['203.0.113.0/29'], reclaimPolicy: 'Delete', families: ['IPv4'] },
  { name: 'h-v4-retain', addresses: ['203.0.113.8/30'], reclaimPolicy: 'Retain', families: ['IPv4'] },
  { name: 'h-v6', addresses: ['2001:db8::/125'], reclaimPolicy: 'Delete', families: ['IPv6'] },
  { name: 'h-dual', addresses: ['203.0.113.16/29', '2001:db8::100/125'], reclaimPolicy: 'Retain', families: ['IPv4', 'IPv6', 'Dual'] },
  { name: 'h-lb', addresses: ['203.0.113.24/30', '2001:db8::200/126'], reclaimPolicy: 'Delete', families: ['IPv4', 'IPv6', 'Dual'], loadBalancerClass: LB_CLASS },
];

/**
 * The classes an admin makes by mistake: never in CLASSES, so no claim is ever made in one. Each
 * one's own ranges overlap, in one of three shapes (`badClassAddresses`).
 */
export const BAD_CLASS_NAMES = ['h-bad-1', 'h-bad-2'] as const;
export type BadClassShape = 'cidrs' | 'range' | 'world';
export const BAD_CLASS_SHAPES: readonly BadClassShape[] = ['cidrs', 'range', 'world'];

/** For the `world` shape: a range of a class of the world, and an a-b range inside it. */
const WORLD_OVERLAPS: readonly (readonly string[])[] = [
  ['203.0.113.0/29', '203.0.113.2-203.0.113.3'], // h-v4
  ['2001:db8::/125', '2001:db8::2-2001:db8::3'], // h-v6
  ['203.0.113.16/29', '203.0.113.18-203.0.113.19'], // h-dual
];

/**
 * What a bad class asks for:
 *  - `cidrs`: two overlapping CIDRs, apart from every class of the world (each name in its own
 *    slice of 192.0.2.0/24): the package's admission policy refuses it, and a driver that let it
 *    through would make MetalLB refuse its whole configuration (the MetalLB pools invariant sees it);
 *  - `range`: a CIDR and an a-b range inside it, apart likewise: admitted (CEL's cidr library cannot
 *    read a range), the driver must refuse it (OverlappingRanges);
 *  - `world`: the same inside a class of the world (the `pick`-th), which is older, has its pool
 *    written and addresses bound: by the stable rule it keeps its pool, so the world's invariants
 *    still hold, and a driver that gave the pool to the newcomer would make its addresses Lost.
 */
export function badClassAddresses(name: string, shape: BadClassShape, pick: number): string[] {
  const base = BAD_CLASS_NAMES.indexOf(name as (typeof BAD_CLASS_NAMES)[number]) * 32;
  switch (shape) {
    case 'cidrs':
      return [`192.0.2.${base}/28`, `192.0.2.${base + 8}/29`];
    case 'range':
      return [`192.0.2.${base}/28`, `192.0.2.${base + 8}-192.0.2.${base + 11}`];
    case 'world':
      return [...WORLD_OVERLAPS[pick % WORLD_OVERLAPS.length]!];
  }
}

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
/** The driver's marker of its own pin, and its carrier label: with METALLB_PIN, the keys a replace drops. */
export const PINNED_MARKER = 'metallb.drivers.local.sdn.cozystack.io/pinned';
export const CARRIER_LABEL = 'metallb.drivers.local.sdn.cozystack.io/carrier';
/** The verdict's conditions: on a Service naming a claim, and on the claim. */
export const SERVICE_ATTACHED = 'local.sdn.cozystack.io/Attached';
export const CLAIM_ATTACHED = 'Attached';

/** What setUpWorld started beside the platform: the MetalLB controller of LB_CLASS. */
export interface World {
  readonly lbMetallb: MetallbController;
}

/**
 * Creates the admin's namespace, starts the MetalLB controller of LB_CLASS (before the class
 * whose holds it serves) and creates the classes, on a fresh platform.
 */
export async function setUpWorld(platform: Platform): Promise<World> {
  await platform.admin.core.createNamespace({ body: { metadata: { name: ADMIN_NAMESPACE } } });
  const lbMetallb = await platform.startMetallbController({ lbClass: LB_CLASS, name: 'metallb-controller-histories-lb' });
  for (const c of CLASSES) {
    await createClass(platform.admin, c.name, [...c.addresses], c.reclaimPolicy, c.loadBalancerClass ? { loadBalancerClass: c.loadBalancerClass } : {});
  }
  return { lbMetallb };
}
