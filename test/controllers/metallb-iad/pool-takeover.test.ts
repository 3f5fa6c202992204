/** A class that takes over an admin's IPAddressPool (`parameters.pool`, docs/adoption.md), and gives it back. */
import { describe, expect, it } from 'vitest';
import { CARRIERS_ONLY, releasedPool, renderBackend } from '../../../controllers/metallb-iad/backend.js';
import { backingPoolName, parseClassParameters } from '../../../controllers/metallb-iad/class-parameters.js';
import type { MetallbObject } from '../../../controllers/metallb-iad/store.js';
import { CARRIER_LABEL, POOL_BEFORE_ANNOTATION, SERVED_BY_CLASS_ANNOTATION } from '../../../controllers/metallb-iad/well-known.js';
import { publicClass, tenantService, world } from './fixtures.js';

const legacy = (extra: Partial<MetallbObject['spec']> = {}): MetallbObject => ({
  apiVersion: 'metallb.io/v1beta1',
  kind: 'IPAddressPool',
  metadata: { name: 'legacy', namespace: 'metallb-system', annotations: { note: 'kept' } },
  spec: { addresses: ['198.51.100.0/28'], autoAssign: true, avoidBuggyIPs: true, ...extra },
});
const adoptingClass = () => publicClass({ parameters: { pool: 'legacy' } });
const condition = (w: ReturnType<typeof world>, type: string) => w.cluster.ipClass('public')!.status?.conditions?.find((c) => c.type === type);

describe('parameters.pool', () => {
  const lookup = (pool?: MetallbObject) => (name: string) => (pool?.metadata.name === name ? pool : undefined);

  it('serves the addresses of the named pool', () => {
    expect(parseClassParameters(adoptingClass(), lookup(legacy()))).toMatchObject({ ok: true, addresses: ['198.51.100.0/28'], adoptedPool: 'legacy' });
    expect(backingPoolName(adoptingClass())).toBe('legacy');
    expect(backingPoolName(publicClass())).toBe('iad-public');
  });

  it.each([
    [{ pool: 'legacy', addresses: ['198.51.100.0/28'] }, legacy(), 'set parameters.addresses or parameters.pool, not both'],
    [{ pool: 'Legacy!' }, legacy(), 'parameters.pool must name an IPAddressPool, got "Legacy!"'],
    [{ pool: 'legacy' }, undefined, "parameters.pool: IPAddressPool legacy not found in MetalLB's namespace"],
    [
      { pool: 'legacy' },
      { ...legacy(), metadata: { name: 'legacy', annotations: { [SERVED_BY_CLASS_ANNOTATION]: 'other' } } },
      'parameters.pool: IPAddressPool legacy is served by IPAddressClass other already',
    ],
    [
      { pool: 'legacy' },
      { ...legacy(), metadata: { name: 'legacy', ownerReferences: [{ apiVersion: 'x/v1', kind: 'IPAddressClass', name: 'b', uid: 'u' }] } },
      'parameters.pool: IPAddressPool legacy is the pool of IPAddressClass b',
    ],
  ])('refuses %j', (parameters, pool, message) => {
    expect(parseClassParameters(publicClass({ parameters }), lookup(pool as MetallbObject | undefined))).toEqual({ ok: false, message });
  });
});

describe('renderBackend for a pool taken over', () => {
  it('turns autoAssign off, keeps every other field, owns nothing, and records the spec it had', () => {
    const { pool, advertisement } = renderBackend(adoptingClass(), 'metallb-system', ['198.51.100.0/28'], false, legacy());
    expect(pool.metadata.ownerReferences).toBeUndefined();
    expect(pool.spec).toEqual({ addresses: ['198.51.100.0/28'], autoAssign: false, avoidBuggyIPs: true });
    expect(pool.metadata.annotations).toEqual({ note: 'kept', [SERVED_BY_CLASS_ANNOTATION]: 'public', [POOL_BEFORE_ANNOTATION]: JSON.stringify(legacy().spec) });
    expect(advertisement.spec).toEqual({ ipAddressPools: ['legacy'] });
    expect(advertisement.metadata.name).toBe('iad-public');
  });

  it('admits only carriers once asked, and gives back exactly what it took', () => {
    const first = renderBackend(adoptingClass(), 'metallb-system', [], false, legacy()).pool;
    const second = renderBackend(adoptingClass(), 'metallb-system', [], true, first).pool;
    expect(second.spec?.serviceAllocation).toEqual(CARRIERS_ONLY);
    expect(second.metadata.annotations?.[POOL_BEFORE_ANNOTATION]).toBe(JSON.stringify(legacy().spec));
    const given = releasedPool(second);
    expect(given.spec).toEqual(legacy().spec);
    expect(given.metadata.annotations).toEqual({ note: 'kept' });
  });
});

describe('the class controller and a pool it takes over', () => {
  it('takes the pool over (no pool of its own), waits for every Service holding its IPs to be a carrier, then admits only carriers', async () => {
    const w = world();
    w.cluster.putClass(adoptingClass());
    w.cluster.pools.set('IPAddressPool/legacy', legacy());
    const unadopted = tenantService('old', {}, '198.51.100.3');
    w.cluster.putService(unadopted);
    await w.reconcileClass();
    expect(w.cluster.poolNamed('iad-public')).toBeUndefined();
    const taken = w.cluster.poolNamed('legacy')!;
    expect(taken.spec).toMatchObject({ autoAssign: false });
    expect(taken.spec?.serviceAllocation).toBeUndefined(); // the unadopted Service would lose its IP
    expect(condition(w, 'BackendReady')).toMatchObject({ status: 'True', message: expect.stringContaining('taken over') });
    w.cluster.putService({ ...unadopted, metadata: { ...unadopted.metadata, labels: { [CARRIER_LABEL]: 'true' } } });
    await w.reconcileClass();
    expect(w.cluster.poolNamed('legacy')!.spec?.serviceAllocation).toEqual(CARRIERS_ONLY);
  });

  it('gives the pool back as it was when the class goes, or names another pool', async () => {
    for (const change of ['deleted', 'repointed'] as const) {
      const w = world();
      w.cluster.putClass(adoptingClass());
      w.cluster.pools.set('IPAddressPool/legacy', legacy());
      await w.reconcileClass();
      await w.reconcileClass();
      expect(w.cluster.poolNamed('legacy')!.spec?.serviceAllocation).toEqual(CARRIERS_ONLY);
      if (change === 'deleted') {
        w.cluster.classes.delete('public');
      } else {
        w.cluster.putClass(publicClass({ parameters: { addresses: ['192.0.2.0/28'] } }));
      }
      await w.reconcileClass();
      expect(w.cluster.poolNamed('legacy')).toEqual(expect.objectContaining({ spec: legacy().spec, metadata: expect.objectContaining({ annotations: { note: 'kept' } }) }));
    }
  });

  it('another class overlapping a taken-over pool is refused as an overlap between classes, not a foreign pool', async () => {
    const w = world();
    w.cluster.putClass(adoptingClass());
    w.cluster.pools.set('IPAddressPool/legacy', legacy());
    await w.reconcileClass();
    w.cluster.putClass({ ...publicClass({ parameters: { addresses: ['198.51.100.8/29'] } }), metadata: { name: 'late', uid: 'late-uid', creationTimestamp: new Date('2030-01-01T00:00:00Z') } });
    await w.reconcileClass('late');
    expect(w.cluster.ipClass('late')!.status?.conditions?.find((c) => c.type === 'BackendReady')).toMatchObject({ reason: 'OverlappingClassParameters' });
  });
});
