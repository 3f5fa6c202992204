/**
 * The core's claim metrics (docs/binding.md, "Metrics"): computed from the
 * claim cache at each scrape, one series per class and phase, never per claim.
 */
import { Gauge, type Registry } from 'prom-client';
import { resolvedClassName, type IPAddressClaim } from '../../api/v1alpha1/index.js';

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

export function registerCoreMetrics(registry: Registry, claims: () => readonly IPAddressClaim[], classNames: () => readonly string[]): void {
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
}
