import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { claimSummary, placesHeld, registerCoreMetrics } from '../../../controllers/address-controller/metrics.js';
import type { IPAddressClaim, IPAddressClass } from '../../../api/v1alpha1/index.js';
import { ipClass as ipClassNamed } from './fixtures.js';

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
    registerCoreMetrics(registry, () => claims.slice(0, 1), () => [ipClassNamed('public'), ipClassNamed('private')]);
    const text = await registry.metrics();
    expect(text).toContain('cozy_addresses_claims{class="public",phase="Bound"} 1');
    expect(text).toContain('cozy_addresses_claim_pending_oldest_seconds{class="private"} 0');
  });
});

describe('places under a per-namespace limit', () => {
  const limited: IPAddressClass = ipClassNamed('public', { maxClaimsPerNamespace: 2 });
  const withReason = (name: string, namespace: string, reason: string): IPAddressClaim => ({
    ...claim(name, 'Pending', 'public', '2026-01-01T00:00:00Z'),
    metadata: { name, namespace },
    status: { phase: 'Pending', className: 'public', conditions: [{ type: 'Bound', status: 'False', reason, message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
  });
  it('counts Bound, Lost and granted claims per namespace of limited classes only, never a refused one', () => {
    const claims = [
      claim('a', 'Bound', 'public', '2026-01-01T00:00:00Z'),
      claim('b', 'Lost', 'public', '2026-01-01T00:00:00Z'),
      withReason('c', 'tenant-a', 'WaitingForProvisioning'),
      withReason('d', 'tenant-a', 'ClassLimitReached'),
      withReason('e', 'tenant-b', 'ClassNotAllowed'),
      withReason('f', 'tenant-b', 'WaitingForProvisioning'),
      claim('g', 'Bound', 'private', '2026-01-01T00:00:00Z'),
    ];
    expect(placesHeld(claims, [limited, ipClassNamed('private')])).toEqual([
      { className: 'public', namespace: 'tenant-a', count: 3 },
      { className: 'public', namespace: 'tenant-b', count: 1 },
    ]);
  });
  it('exports the counts and each limit', async () => {
    const registry = new Registry();
    registerCoreMetrics(registry, () => [claim('a', 'Bound', 'public', '2026-01-01T00:00:00Z')], () => [limited]);
    const text = await registry.metrics();
    expect(text).toContain('cozy_addresses_class_namespace_claims{class="public",namespace="tenant-a"} 1');
    expect(text).toContain('cozy_addresses_class_namespace_limit{class="public"} 2');
  });
});
