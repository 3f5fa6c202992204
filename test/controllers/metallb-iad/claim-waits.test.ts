/** A claim says why it waits (BackendNotReady, FamilyNotServed), and an IP another IPAddress has is given back (issue 39). */
import { describe, expect, it } from 'vitest';
import type { IPAddress, IPAddressClass } from '../../../api/v1alpha1/index.js';
import { classChangedForClaims, poolChangedForClaims, poolServes } from '../../../controllers/metallb-iad/claim-reconciler.js';
import type { MetallbObject } from '../../../controllers/metallb-iad/store.js';
import { boundAddress, pendingClaim, PH, publicClass, world } from './fixtures.js';

const provisioned = (w: ReturnType<typeof world>) => w.cluster.claim('tenant-a', 'web')!.status?.conditions?.find((c) => c.type === 'Provisioned');
const claimWrites = (w: ReturnType<typeof world>) => w.cluster.log.filter((l) => l.startsWith('status IPAddressClaim'));
const v4only = (): IPAddressClass => ({ ...publicClass({ parameters: { addresses: ['203.0.113.0/29'] } }), metadata: { name: 'v4only', uid: 'class-uid-v4only' } });

describe('BackendNotReady: the class has no pool in MetalLB', () => {
  it('before the class pass has written it: reserves nothing and says nothing (no news); when the pool appears the claim proceeds', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putClaim(pendingClaim());
    expect(await w.reconcileClaim()).toEqual({ requeueAfterMs: 5_000 });
    expect(w.cluster.placeholders()).toEqual([]);
    expect(provisioned(w)).toBeUndefined();
    expect(claimWrites(w)).toEqual([]);
    expect(w.events.events).toEqual([]);

    await w.reconcileClass(); // the pool is written (and wakes the class's waiting claims)
    await w.reconcileClaim();
    expect(w.cluster.placeholders().map((p) => p.metadata?.annotations?.['metallb.io/address-pool'])).toEqual(['iad-public']);
    w.cluster.assign(PH, 'iad-claim-uid-1-v4', '203.0.113.3');
    await w.reconcileClaim();
    expect(w.cluster.address('ip-203-0-113-3')?.spec.claimRef?.uid).toBe('claim-uid-1');
  });

  it('quotes the class’s BackendReady reason and message', async () => {
    const w = world();
    w.cluster.putClass(publicClass({ parameters: { addresses: ['198.51.100.0/28', '198.51.100.8/29'] } }));
    await w.reconcileClass();
    w.cluster.putClaim(pendingClaim());
    await w.reconcileClaim();
    expect(provisioned(w)).toMatchObject({
      reason: 'BackendNotReady',
      message: expect.stringMatching(/^IPAddressClass public has no MetalLB pool written \(BackendReady OverlappingRanges: parameters\.addresses\[0\] "198\.51\.100\.0\/28" and .*\); waiting until it has one$/),
    });
    expect(w.cluster.placeholders()).toEqual([]);
    await w.reconcileClaim();
    expect(claimWrites(w)).toHaveLength(1); // said once: no second write, no second Event
    expect(w.events.events.filter((e) => e.object === 'IPAddressClaim/web').map((e) => e.reason)).toEqual(['BackendNotReady']);
  });

  it('the pool gone: an unassigned placeholder of the claim is deleted; an assigned one is recorded as before', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass();
    w.cluster.putClaim(pendingClaim({ className: 'public', family: 'Dual' }));
    await w.reconcileClaim();
    expect(w.cluster.placeholders()).toHaveLength(2);
    w.cluster.assign(PH, 'iad-claim-uid-1-v4', '203.0.113.2');
    w.cluster.pools.delete('IPAddressPool/iad-public');
    await w.reconcileClaim();
    expect(w.cluster.placeholders().map((p) => p.metadata?.name)).toEqual(['iad-claim-uid-1-v4']);
    expect(w.cluster.address('ip-203-0-113-2')?.spec.claimRef?.name).toBe('web');
    expect(provisioned(w)).toBeUndefined(); // the class still says PoolWritten: its pass writes the pool again
  });

  it('a pool named in parameters.pool is the class’s only once taken over', () => {
    const adopting = publicClass({ parameters: { pool: 'legacy' } });
    const legacy: MetallbObject = { kind: 'IPAddressPool', metadata: { name: 'legacy', namespace: 'metallb-system' }, spec: { addresses: ['198.51.100.0/28'] } };
    expect(poolServes(adopting, legacy)).toBe(false);
    expect(poolServes(adopting, { ...legacy, metadata: { ...legacy.metadata, annotations: { 'metallb.drivers.local.sdn.cozystack.io/served-by-class': 'public' } } })).toBe(true);
    expect(poolServes(publicClass(), undefined)).toBe(false);
    expect(poolServes(publicClass(), { ...legacy, metadata: { name: 'iad-public' } })).toBe(true);
  });
});

describe('FamilyNotServed: the class has no range of a family the claim asks', () => {
  it('a Dual claim on an IPv4-only class reserves nothing for either family, and is not ClassExhausted', async () => {
    const w = world();
    w.cluster.putClass(v4only());
    await w.reconcileClass('v4only');
    const claim = pendingClaim({ className: 'v4only', family: 'Dual' });
    w.cluster.putClaim({ ...claim, status: { ...claim.status!, className: 'v4only' } });
    await w.reconcileClaim();
    await w.reconcileClaim();
    expect(w.cluster.placeholders()).toEqual([]);
    const message = 'IPAddressClass v4only has no IPv6 range; a Dual claim cannot be provisioned there';
    expect(provisioned(w)).toMatchObject({ status: 'False', reason: 'FamilyNotServed', message });
    expect(w.events.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'FamilyNotServed', message })]);
  });

  it('an IPv6 claim says so too; once the class has IPv6 the claim reserves', async () => {
    const w = world();
    w.cluster.putClass(v4only());
    await w.reconcileClass('v4only');
    const claim = pendingClaim({ className: 'v4only', family: 'IPv6' });
    w.cluster.putClaim({ ...claim, status: { ...claim.status!, className: 'v4only' } });
    await w.reconcileClaim();
    expect(provisioned(w)?.message).toBe('IPAddressClass v4only has no IPv6 range; an IPv6 claim cannot be provisioned there');
    w.cluster.putClass({ ...v4only(), spec: { ...v4only().spec, parameters: { addresses: ['203.0.113.0/29', '2001:db8::/126'] } } });
    await w.reconcileClass('v4only');
    await w.reconcileClaim();
    expect(w.cluster.placeholders().map((p) => p.metadata?.name)).toEqual(['iad-claim-uid-1-v6']);
    expect(provisioned(w)).toBeUndefined();
  });
});

describe('what wakes a waiting claim', () => {
  const pool: MetallbObject = { kind: 'IPAddressPool', metadata: { name: 'iad-public' }, spec: { addresses: ['203.0.113.0/29'] } };
  it('a pool’s spec or its taking over, not MetalLB’s status', () => {
    expect(poolChangedForClaims(pool, { ...pool, spec: { addresses: ['203.0.113.0/28'] } })).toBe(true);
    expect(poolChangedForClaims(pool, { ...pool, metadata: { ...pool.metadata, annotations: { 'metallb.drivers.local.sdn.cozystack.io/served-by-class': 'public' } } })).toBe(true);
    expect(poolChangedForClaims(pool, { ...pool, metadata: { ...pool.metadata, resourceVersion: '9' } })).toBe(false);
  });
  it('a class’s spec, or what its BackendReady says; not its books', () => {
    const ready = (reason: string) => ({ type: 'BackendReady', status: 'False' as const, reason, message: '', lastTransitionTime: '' });
    const c = { ...publicClass(), metadata: { ...publicClass().metadata, generation: 1 }, status: { conditions: [ready('OverlappingRanges')] } };
    expect(classChangedForClaims(c, { ...c, metadata: { ...c.metadata, generation: 2 } })).toBe(true);
    expect(classChangedForClaims(c, { ...c, status: { conditions: [ready('OverlapsForeignPool')] } })).toBe(true);
    expect(classChangedForClaims(c, { ...c, status: { ...c.status, inUse: 3 } })).toBe(false);
  });
});

describe('an IP MetalLB assigns that another IPAddress has, whatever its name or spelling', () => {
  const handClass = (): IPAddressClass => ({ ...publicClass({ parameters: { addresses: ['192.0.2.128/28'] } }), metadata: { name: 'hand', uid: 'class-uid-hand' } });
  const handmade = (name: string, address: string, claimRef?: IPAddress['spec']['claimRef'], created = '2026-01-01T00:00:00Z'): IPAddress => ({
    ...boundAddress({ phase: 'Available' }),
    metadata: { name, uid: `uid-${name}`, creationTimestamp: new Date(created) },
    spec: { className: 'hand', address, reclaimPolicy: 'Retain', source: {}, ...(claimRef ? { claimRef } : {}) },
  });
  const setUp = async (...addresses: IPAddress[]) => {
    const w = world();
    w.cluster.putClass(handClass());
    await w.reconcileClass('hand');
    const claim = pendingClaim({ className: 'hand', family: 'IPv4' });
    w.cluster.putClaim({ ...claim, status: { ...claim.status!, className: 'hand' } });
    await w.reconcileClaim();
    addresses.forEach((a) => w.cluster.putAddress(a));
    w.cluster.assign(PH, 'iad-claim-uid-1-v4', '192.0.2.131');
    w.cluster.log.length = 0;
    await w.reconcileClaim();
    return w;
  };

  it('an admin’s dup-a for ::ffff:192.0.2.131, recorded for no claim: given back (LedgerMismatch), no ip-192-0-2-131 made', async () => {
    const w = await setUp(handmade('dup-a', '::ffff:192.0.2.131'));
    expect(w.cluster.log.filter((l) => l.startsWith('create IPAddress'))).toEqual([]);
    expect(w.cluster.address('ip-192-0-2-131')).toBeUndefined();
    expect(w.cluster.service(PH, 'iad-claim-uid-1-v4')).toBeUndefined();
    expect(w.events.events).toContainEqual(
      expect.objectContaining({ type: 'Warning', reason: 'LedgerMismatch', message: 'MetalLB assigned 192.0.2.131, but IPAddress dup-a records it for no claim; gave it back and asking again' }),
    );
  });

  it('the earliest of several, recorded for another claim, is the one named', async () => {
    const other = { namespace: 'tenant-b', name: 'h2', uid: 'u-h2' };
    const w = await setUp(handmade('dup-b', '192.0.2.131', undefined, '2026-01-02T00:00:00Z'), handmade('dup-a', '192.0.2.131', other, '2026-01-01T00:00:00Z'));
    expect(w.cluster.address('ip-192-0-2-131')).toBeUndefined();
    expect(w.events.events).toContainEqual(expect.objectContaining({ reason: 'LedgerMismatch', message: expect.stringContaining('IPAddress dup-a records it for IPAddressClaim tenant-b/h2') }));
  });

  it('one recorded for this very claim under another name is handed the placeholder; no second address', async () => {
    const w = await setUp(handmade('pre-bound', '192.0.2.131', { namespace: 'tenant-a', name: 'web', uid: 'claim-uid-1' }));
    expect(w.cluster.log.filter((l) => l.startsWith('create IPAddress'))).toEqual([]);
    expect(w.events.reasons()).not.toContain('LedgerMismatch');
    expect(w.cluster.service(PH, 'iad-claim-uid-1-v4')?.metadata?.labels?.['metallb.drivers.local.sdn.cozystack.io/ip-address']).toBe('pre-bound');
  });
});
