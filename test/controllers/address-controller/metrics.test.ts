import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { claimSummary, registerCoreMetrics } from '../../../controllers/address-controller/metrics.js';
import type { IPAddressClaim } from '../../../api/v1alpha1/index.js';

const claim = (name: string, phase: string | undefined, className: string | undefined, created: string): IPAddressClaim => ({
  apiVersion: 'local.sdn.cozystack.io/v1alpha1',
  kind: 'IPAddressClaim',
  metadata: { name, namespace: 'tenant-a', creationTimestamp: created as unknown as Date },
  spec: {},
  status: { ...(phase ? { phase: phase as 'Bound' } : {}), ...(className ? { className } : {}) },
});

describe('the core’s claim metrics', () => {
  const claims = [
    claim('a', 'Bound', 'public', '2026-01-01T00:00:00Z'),
    claim('b', 'Pending', 'public', '2026-01-01T00:09:00Z'),
    claim('c', 'Pending', 'public', '2026-01-01T00:05:00Z'),
    claim('d', undefined, undefined, '2026-01-01T00:10:00Z'),
  ];

  it('counts claims per class and phase, and the oldest waiting one per class', () => {
    const summary = claimSummary(claims, Date.parse('2026-01-01T00:10:00Z'));
    expect(summary.byClassAndPhase).toEqual([
      { className: 'public', phase: 'Bound', count: 1 },
      { className: 'public', phase: 'Pending', count: 2 },
      { className: '', phase: 'Pending', count: 1 },
    ]);
    expect([...summary.oldestPending]).toEqual([
      ['public', 300],
      ['', 0],
    ]);
  });

  it('exports them on scrape, with 0 for a class nothing waits in', async () => {
    const registry = new Registry();
    registerCoreMetrics(registry, () => claims.slice(0, 1), () => ['public', 'private']);
    const text = await registry.metrics();
    expect(text).toContain('cozy_addresses_claims{class="public",phase="Bound"} 1');
    expect(text).toContain('cozy_addresses_claim_pending_oldest_seconds{class="private"} 0');
  });
});
