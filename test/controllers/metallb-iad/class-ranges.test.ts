/** A class's ranges checked together before anything reaches MetalLB: within one class, and across classes (issue 39). */
import { describe, expect, it } from 'vitest';
import type { IPAddressClass } from '../../../api/v1alpha1/index.js';
import { parseRange, type IpRange } from '../../../api/ip.js';
import { overlapKeeper, overlappingEntries, rangeEntries } from '../../../controllers/metallb-iad/class-parameters.js';
import type { MetallbObject } from '../../../controllers/metallb-iad/store.js';
import { boundAddress, publicClass, world } from './fixtures.js';

const ipClass = (name: string, addresses: string[], created = '2026-01-01T00:00:00Z'): IPAddressClass => {
  const base = publicClass({ parameters: { addresses } });
  return { ...base, metadata: { name, uid: `class-uid-${name}`, creationTimestamp: new Date(created) } };
};
const ranges = (texts: string[]) => texts.map((t) => parseRange(t) as IpRange);
const backendReady = (w: ReturnType<typeof world>, name: string) => w.cluster.ipClass(name)!.status?.conditions?.find((c) => c.type === 'BackendReady');
const applies = (w: ReturnType<typeof world>) => w.cluster.log.filter((l) => l.startsWith('apply'));

describe('overlappingEntries', () => {
  it.each([
    [['198.51.100.0/28', '198.51.100.8/29'], [0, 1]],
    [['10.0.0.0/24', '10.0.0.0/24'], [0, 1]], // identical entries
    [['192.0.2.0/28', '192.0.2.10-192.0.2.20'], [0, 1]], // a range across a CIDR
    [['192.0.2.0/28', '2001:db8::/64', '192.0.2.15-192.0.2.15'], [0, 2]],
  ])('%j: entries %j overlap', (addresses, pair) => {
    const found = overlappingEntries(addresses, ranges(addresses));
    expect(found?.map((e) => [e.index, e.text])).toEqual(pair.map((i) => [i, addresses[i]]));
  });

  it('disjoint ranges, and the same numbers in two families, do not', () => {
    const addresses = ['192.0.2.0/28', '192.0.2.16-192.0.2.31', '::c000:200/124'];
    expect(overlappingEntries(addresses, ranges(addresses))).toBeUndefined();
  });
});

describe('a class whose own ranges overlap', () => {
  it('gets OverlappingRanges naming both entries, one Warning, and no pool or advertisement', async () => {
    const w = world();
    w.cluster.putClass(ipClass('bad', ['198.51.100.0/28', '198.51.100.8/29']));
    await w.reconcileClass('bad');
    await w.reconcileClass('bad');
    const message =
      'parameters.addresses[0] "198.51.100.0/28" and parameters.addresses[1] "198.51.100.8/29" overlap; MetalLB would refuse the pool and stop applying any configuration, so no pool is written';
    expect(backendReady(w, 'bad')).toMatchObject({ status: 'False', reason: 'OverlappingRanges', message });
    expect(w.events.events).toEqual([expect.objectContaining({ object: 'IPAddressClass/bad', type: 'Warning', reason: 'OverlappingRanges', message })]);
    expect(w.cluster.pools.size).toBe(0);
  });

  it('a pool written earlier stays exactly as it is when the class is edited to overlap itself', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass();
    const before = w.cluster.pools.get('IPAddressPool/iad-public');
    w.cluster.putClass(publicClass({ parameters: { addresses: ['203.0.113.0/29', '203.0.113.4-203.0.113.4'] } }));
    w.cluster.log.length = 0;
    await w.reconcileClass();
    expect(applies(w)).toEqual([]);
    expect(w.cluster.pools.get('IPAddressPool/iad-public')).toEqual(before);
    expect(backendReady(w, 'public')).toMatchObject({ reason: 'OverlappingRanges', message: expect.stringContaining('parameters.addresses[1] "203.0.113.4-203.0.113.4"') });
  });

  it('a pool taken over (parameters.pool) whose entries overlap is not taken over', async () => {
    const w = world();
    const legacy: MetallbObject = { apiVersion: 'metallb.io/v1beta1', kind: 'IPAddressPool', metadata: { name: 'legacy', namespace: 'metallb-system' }, spec: { addresses: ['198.51.100.0/28', '198.51.100.0/28'] } };
    w.cluster.pools.set('IPAddressPool/legacy', legacy);
    w.cluster.putClass(publicClass({ parameters: { pool: 'legacy' } }));
    await w.reconcileClass();
    expect(backendReady(w, 'public')).toMatchObject({
      reason: 'OverlappingRanges',
      message: expect.stringContaining('IPAddressPool legacy spec.addresses[0] "198.51.100.0/28" and IPAddressPool legacy spec.addresses[1] "198.51.100.0/28" overlap'),
    });
    expect(applies(w)).toEqual([]);
    expect(w.cluster.poolNamed('legacy')).toEqual(legacy);
  });

  it('does not stop a later class (the issue: first, bad, second): second still gets its pool', async () => {
    const w = world();
    w.cluster.putClass(ipClass('first', ['203.0.113.0/29'], '2026-01-01T00:00:00Z'));
    w.cluster.putClass(ipClass('bad', ['198.51.100.0/28', '198.51.100.8/29'], '2026-01-01T00:01:00Z'));
    w.cluster.putClass(ipClass('second', ['192.0.2.0/28'], '2026-01-01T00:02:00Z'));
    for (const name of ['first', 'bad', 'second']) {
      await w.reconcileClass(name);
    }
    expect(w.cluster.pool('bad')).toBeUndefined();
    expect(w.cluster.pool('second')?.spec?.addresses).toEqual(['192.0.2.0/28']);
    expect(w.cluster.pool('first')?.spec?.addresses).toEqual(['203.0.113.0/29']);
    expect(backendReady(w, 'second')).toMatchObject({ status: 'True', reason: 'PoolWritten' });
  });
});

describe('two classes whose ranges overlap', () => {
  it('an edit of an old class onto a younger class holding a pool with bound addresses is refused; the old pool is untouched', async () => {
    const w = world();
    w.cluster.putClass(ipClass('first', ['203.0.113.0/29'], '2025-01-01T00:00:00Z'));
    w.cluster.putClass(ipClass('second', ['198.51.100.0/28'], '2026-01-01T00:00:00Z'));
    await w.reconcileClass('first');
    await w.reconcileClass('second');
    w.cluster.putAddress({ ...boundAddress(), metadata: { name: 'ip-198-51-100-1', uid: 'a1' }, spec: { ...boundAddress().spec, className: 'second', address: '198.51.100.1' } });
    const firstPool = w.cluster.pools.get('IPAddressPool/iad-first');
    const secondPool = w.cluster.pools.get('IPAddressPool/iad-second');
    w.cluster.putClass(ipClass('first', ['203.0.113.0/29', '198.51.100.0/24'], '2025-01-01T00:00:00Z'));
    w.cluster.log.length = 0;
    for (const name of ['first', 'second', 'first']) {
      await w.reconcileClass(name);
    }
    expect(applies(w)).toEqual([]);
    expect(w.cluster.pools.get('IPAddressPool/iad-first')).toEqual(firstPool);
    expect(w.cluster.pools.get('IPAddressPool/iad-second')).toEqual(secondPool);
    expect(backendReady(w, 'first')).toMatchObject({
      status: 'False',
      reason: 'OverlappingClassParameters',
      message: 'parameters.addresses "198.51.100.0/24" overlap "198.51.100.0/28" of IPAddressClass "second", which serves them already; no pool written (the pool in place is kept as it is)',
    });
    expect(backendReady(w, 'second')).toMatchObject({ status: 'True', reason: 'PoolWritten' });
  });

  it.each([
    ['older first', ['old', 'young']],
    ['younger first', ['young', 'old']],
  ])('two new classes: the older keeps the ranges whatever the order of the passes (%s)', async (_, order) => {
    const w = world();
    w.cluster.putClass(ipClass('young', ['198.51.100.8/29'], '2026-01-01T00:00:00Z'));
    w.cluster.putClass(ipClass('old', ['198.51.100.0/28'], '2025-01-01T00:00:00Z'));
    for (const name of [...order!, ...order!]) {
      await w.reconcileClass(name);
    }
    expect(w.cluster.pool('old')?.spec?.addresses).toEqual(['198.51.100.0/28']);
    expect(w.cluster.pool('young')).toBeUndefined();
    expect(backendReady(w, 'young')).toMatchObject({
      reason: 'OverlappingClassParameters',
      message: 'parameters.addresses "198.51.100.8/29" overlap "198.51.100.0/28" of IPAddressClass "old", which serves them already; no pool written',
    });
  });

  it('of two created at once, the smaller name keeps them', async () => {
    const w = world();
    w.cluster.putClass(ipClass('b', ['198.51.100.0/28']));
    w.cluster.putClass(ipClass('a', ['198.51.100.0/28']));
    await w.reconcileClass('b');
    expect(backendReady(w, 'b')).toMatchObject({
      reason: 'OverlappingClassParameters',
      message: 'parameters.addresses "198.51.100.0/28" overlap "198.51.100.0/28" of IPAddressClass "a", which comes first (older, then by name) and takes them; no pool written',
    });
    await w.reconcileClass('a');
    expect(w.cluster.pool('a')).toBeDefined();
    expect(w.cluster.pool('b')).toBeUndefined();
  });

  it('no pool is written over another class’s pool as MetalLB has it now, until that class has rewritten it', async () => {
    const w = world();
    w.cluster.putClass(ipClass('moving', ['198.51.100.0/28'], '2025-01-01T00:00:00Z'));
    await w.reconcileClass('moving');
    // The old class gives the range up, a new class asks for it; the old one has not rewritten its pool yet.
    w.cluster.putClass(ipClass('moving', ['192.0.2.0/28'], '2025-01-01T00:00:00Z'));
    w.cluster.putClass(ipClass('newcomer', ['198.51.100.0/29'], '2026-01-01T00:00:00Z'));
    await w.reconcileClass('newcomer');
    expect(w.cluster.pool('newcomer')).toBeUndefined();
    expect(backendReady(w, 'newcomer')).toMatchObject({
      reason: 'OverlappingClassParameters',
      message:
        'parameters.addresses "198.51.100.0/29" overlap "198.51.100.0/28" of IPAddressPool metallb-system/iad-moving, which IPAddressClass "moving" has written in MetalLB now; no pool written until that pool no longer has them',
    });
    await w.reconcileClass('moving'); // its pool rewritten (this wakes every class)
    await w.reconcileClass('newcomer');
    expect(w.cluster.pool('newcomer')?.spec?.addresses).toEqual(['198.51.100.0/29']);
    expect(w.cluster.pool('moving')?.spec?.addresses).toEqual(['192.0.2.0/28']);
  });

  it('overlapKeeper: the side whose written pool holds part of the other’s ranges, else the older', () => {
    const older = ipClass('older', [], '2025-01-01T00:00:00Z');
    const younger = ipClass('younger', [], '2026-01-01T00:00:00Z');
    const side = (c: IPAddressClass, desired: string[], written: string[] = []) => ({ ipClass: c, desired: rangeEntries(desired), written: rangeEntries(written) });
    expect(overlapKeeper(side(older, ['10.0.0.0/24']), side(younger, ['10.0.0.0/28'], ['10.0.0.0/28']))).toEqual({ keeper: 'theirs', holds: true });
    expect(overlapKeeper(side(younger, ['10.0.0.0/28'], ['10.0.0.0/28']), side(older, ['10.0.0.0/24']))).toEqual({ keeper: 'mine', holds: true });
    expect(overlapKeeper(side(younger, ['10.0.0.0/28']), side(older, ['10.0.0.0/24']))).toEqual({ keeper: 'theirs', holds: false });
    expect(overlapKeeper(side(older, ['10.0.0.0/24'], ['10.0.0.0/25']), side(younger, ['10.0.0.0/28'], ['10.0.0.0/28']))).toEqual({ keeper: 'mine', holds: true });
  });
});
