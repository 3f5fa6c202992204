/**
 * The metrics the shipped alert rules and dashboard query: names, types and
 * labels as the controllers export them on /metrics (issue 23's contract).
 *
 * The controllers register their metrics with prom-client and never import
 * constructs/, so the contract is restated here once; the typo test
 * (test/constructs/monitoring/metric-names.test.ts) fails when this list, the
 * controllers' registries, or what a rule or panel queries drift apart.
 */
import { ADDRESS_CONTROLLER } from '../charts/address-controller.js';
import { METALLB_IAD } from '../charts/metallb-iad.js';

/** The `job` label each controller's scrape sets (constructs/monitoring/pod-scrape.ts). */
export const JOBS = {
  core: ADDRESS_CONTROLLER,
  driver: METALLB_IAD,
} as const;
export type Job = (typeof JOBS)[keyof typeof JOBS];

export interface MetricDefinition {
  readonly name: string;
  readonly type: 'gauge' | 'counter' | 'histogram';
  /** The labels the controller sets; the scrape adds `job`, `pod`, `instance` and `tier`. */
  readonly labels: readonly string[];
  /** The controllers that export it. */
  readonly exportedBy: readonly Job[];
}

const both = [JOBS.core, JOBS.driver] as const;

function metric<const N extends string>(name: N, type: MetricDefinition['type'], labels: readonly string[], exportedBy: readonly Job[]) {
  return { name, type, labels, exportedBy } as const satisfies MetricDefinition;
}

export const METRICS = {
  // The core (address-controller).
  /** IPAddressClaims by resolved class ('' while unresolved) and phase (Pending, Bound, Lost). */
  claims: metric('cozy_addresses_claims', 'gauge', ['class', 'phase'], [JOBS.core]),
  /** Age of the oldest claim not Bound, per class; 0 when none waits. */
  claimPendingOldestSeconds: metric('cozy_addresses_claim_pending_oldest_seconds', 'gauge', ['class'], [JOBS.core]),
  /** Per class with a per-namespace limit, the claims of each namespace that count against it. */
  classNamespaceClaims: metric('cozy_addresses_class_namespace_claims', 'gauge', ['class', 'namespace'], [JOBS.core]),
  /** A class's spec.maxClaimsPerNamespace. */
  classNamespaceLimit: metric('cozy_addresses_class_namespace_limit', 'gauge', ['class'], [JOBS.core]),

  // The driver (metallb-iad).
  /** Addresses a class's ranges hold, per family (IPv4, IPv6). */
  classCapacity: metric('cozy_addresses_class_capacity', 'gauge', ['class', 'family'], [JOBS.driver]),
  /** Recorded IPAddresses of a class by phase (Available, Bound, Released, Conflict, Lost, Pending). */
  classAddresses: metric('cozy_addresses_class_addresses', 'gauge', ['class', 'family', 'phase'], [JOBS.driver]),
  /** Capacity minus recorded. */
  classFree: metric('cozy_addresses_class_free', 'gauge', ['class', 'family'], [JOBS.driver]),
  /** Addresses held by a placeholder Service. */
  holds: metric('cozy_addresses_holds', 'gauge', ['class'], [JOBS.driver]),
  /** Addresses associated with a tenant Service. */
  attachments: metric('cozy_addresses_attachments', 'gauge', ['class'], [JOBS.driver]),
  /** Failed writes of a class's MetalLB pool or advertisement. */
  backendFailures: metric('cozy_addresses_backend_failures_total', 'counter', ['class'], [JOBS.driver]),
  /** 1 while a class's MetalLB pool is written as the class says, else 0. */
  classBackendReady: metric('cozy_addresses_class_backend_ready', 'gauge', ['class'], [JOBS.driver]),
  /** 1 while MetalLB reports its configuration valid, 0 while it refuses it; absent while it reports nothing. */
  metallbConfigurationValid: metric('cozy_addresses_metallb_configuration_valid', 'gauge', ['namespace'], [JOBS.driver]),

  // Both, controller-runtime style (controllers/runtime/metrics.ts).
  reconcileTotal: metric('controller_runtime_reconcile_total', 'counter', ['controller', 'result'], both),
  reconcileErrors: metric('controller_runtime_reconcile_errors_total', 'counter', ['controller'], both),
  workqueueDepth: metric('workqueue_depth', 'gauge', ['name'], both),
  /** 1 on the replica holding the Lease; unset on a replica still waiting for it. */
  leaderElectionMasterStatus: metric('leader_election_master_status', 'gauge', ['name'], both),
} as const;

/** Series the scraper writes for every target, not the controllers. */
export const SCRAPE_METRICS = {
  /** 1 when the last scrape of a target succeeded, 0 when it failed; gone with the target. */
  up: metric('up', 'gauge', [], both),
} as const;

/** Labels every scraped series carries from the scrape itself (relabelled as pod-scrape.ts says). */
export const TARGET_LABELS = ['job', 'pod', 'instance', 'tier'] as const;

/** Address phases the driver counts (cozy_addresses_class_addresses{phase}). */
export const ADDRESS_PHASES = ['Available', 'Bound', 'Released', 'Conflict', 'Lost', 'Pending'] as const;
/** Claim phases the core counts (cozy_addresses_claims{phase}). */
export const CLAIM_PHASES = ['Pending', 'Bound', 'Lost'] as const;

type Matcher = readonly [label: string, op: '=' | '!=' | '=~' | '!~', value: string];

/**
 * A series selector from the contract: `name{label="value",...}`. Labels are
 * checked against the metric's own and the target labels, so a rule cannot
 * name a label nobody sets.
 */
export function selector(definition: MetricDefinition, matchers: Readonly<Record<string, string>> | readonly Matcher[] = {}): string {
  const list: readonly Matcher[] = Array.isArray(matchers)
    ? (matchers as readonly Matcher[])
    : Object.entries(matchers as Record<string, string>).map(([label, value]) => [label, '=', value] as const);
  for (const [label] of list) {
    if (!definition.labels.includes(label) && !(TARGET_LABELS as readonly string[]).includes(label)) {
      throw new Error(`${definition.name} has no label ${label}`);
    }
  }
  const body = list.map(([label, op, value]) => `${label}${op}${JSON.stringify(value)}`).join(', ');
  return body ? `${definition.name}{${body}}` : definition.name;
}
