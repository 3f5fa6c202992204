/**
 * The core's claim metrics (docs/binding.md, "Metrics"): computed from the
 * claim cache at each scrape, one series per class and phase, never per claim.
 */
import { Gauge, type Registry } from 'prom-client';
import { holdsPlace, resolvedClassName, type IPAddressClaim, type IPAddressClass } from '../../api/v1alpha1/index.js';

/** A scrape's view of the claims: class ('' while unresolved) and phase, and how long the oldest has waited. */
export function claimSummary(claims: readonly IPAddressClaim[], nowMs: number) {
  const byClassAndPhase = new Map<string, number>();
  const oldestPending = new Map<string, number>();
  for (const claim of claims) {
    const className = resolvedClassName(claim) ?? '';
    const phase = claim.status?.phase ?? 'Pending';
    const key = `${className}\u0000${phase}`;
    byClassAndPhase.set(key, (byClassAndPhase.get(key) ?? 0) + 1);
    if (phase !== 'Bound') {
      const created = Date.parse(String(claim.metadata.creationTimestamp ?? ''));
      const age = Number.isNaN(created) ? 0 : Math.max(0, (nowMs - created) / 1000);
      oldestPending.set(className, Math.max(oldestPending.get(className) ?? 0, age));
    }
  }
  return {
    byClassAndPhase: [...byClassAndPhase].map(([key, count]) => {
      const [className = '', phase = ''] = key.split('\u0000');
      return { className, phase, count };
    }),
    oldestPending,
  };
}

/**
 * Per class with a maxClaimsPerNamespace, the places each namespace's claims
 * hold (docs/access.md): what the limit is checked against, from the statuses.
 */
export function placesHeld(claims: readonly IPAddressClaim[], classes: readonly IPAddressClass[]) {
  const limited = new Set(classes.filter((c) => c.spec.maxClaimsPerNamespace !== undefined).map((c) => c.metadata.name!));
  const held = new Map<string, number>();
  for (const claim of claims) {
    const className = resolvedClassName(claim);
    if (className && limited.has(className) && holdsPlace(claim)) {
      const key = `${className}\u0000${claim.metadata.namespace}`;
      held.set(key, (held.get(key) ?? 0) + 1);
    }
  }
  return [...held].map(([key, count]) => {
    const [className = '', namespace = ''] = key.split('\u0000');
    return { className, namespace, count };
  });
}

export function registerCoreMetrics(registry: Registry, claims: () => readonly IPAddressClaim[], classes: () => readonly IPAddressClass[]): void {
  const classNames = () => classes().map((c) => c.metadata.name!);
  new Gauge({
    name: 'cozy_addresses_claims',
    help: 'IPAddressClaims by resolved class ("" while unresolved) and phase.',
    labelNames: ['class', 'phase'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { className, phase, count } of claimSummary(claims(), Date.now()).byClassAndPhase) {
        this.set({ class: className, phase }, count);
      }
    },
  });
  new Gauge({
    name: 'cozy_addresses_claim_pending_oldest_seconds',
    help: 'Age of the oldest claim not Bound, per class (0 when none waits).',
    labelNames: ['class'],
    registers: [registry],
    collect() {
      this.reset();
      const { oldestPending } = claimSummary(claims(), Date.now());
      for (const className of new Set([...classNames(), ...oldestPending.keys()])) {
        this.set({ class: className }, oldestPending.get(className) ?? 0);
      }
    },
  });
  new Gauge({
    name: 'cozy_addresses_class_namespace_claims',
    help: 'Per class with spec.maxClaimsPerNamespace, the claims of each namespace that count against it (Bound, Lost, or being provisioned).',
    labelNames: ['class', 'namespace'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { className, namespace, count } of placesHeld(claims(), classes())) {
        this.set({ class: className, namespace }, count);
      }
    },
  });
  new Gauge({
    name: 'cozy_addresses_class_namespace_limit',
    help: "A class's spec.maxClaimsPerNamespace (classes without one have no series).",
    labelNames: ['class'],
    registers: [registry],
    collect() {
      this.reset();
      for (const ipClass of classes()) {
        if (ipClass.spec.maxClaimsPerNamespace !== undefined) {
          this.set({ class: ipClass.metadata.name! }, ipClass.spec.maxClaimsPerNamespace);
        }
      }
    },
  });
}
