/** A duplicate IPAddress, as the driver treats it: nothing of its own (docs/binding.md, "Duplicates"). */
import { describe, expect, it } from 'vitest';
import type { IPAddress } from '../../../api/v1alpha1/index.js';
import { classBooksOf } from '../../../controllers/metallb-iad/class-books.js';
import { boundAddress, boundClaim, publicClass, tenantService, world } from './fixtures.js';

const CLAIM = 'local.sdn.cozystack.io/ip-address-claim';
const PIN = 'metallb.io/loadBalancerIPs';

/** A hand-made copy of 203.0.113.1 named `name`, created after the original (no timestamp: the fixture's has none either, so the name decides). */
function duplicate(name: string, ip = '203.0.113.1', status: IPAddress['status'] = { phase: 'Conflict' }): IPAddress {
  return {
    apiVersion: 'local.sdn.cozystack.io/v1alpha1',
    kind: 'IPAddress',
    metadata: { name, uid: `uid-${name}` },
    spec: { className: 'public', address: ip, reclaimPolicy: 'Retain', claimRef: { namespace: 'tenant-b', name: 'other', uid: 'u-other' }, source: { fromClass: {} } },
    status,
  };
}

describe('a duplicate IPAddress in the driver', () => {
  it('gets no hold, and its Conflict is not cleared by the driver', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putAddress(boundAddress());
    w.cluster.putAddress(duplicate('zz-copy', '::ffff:203.0.113.1'));
    await w.reconcileAddress();
    await w.reconcileAddress('zz-copy');
    expect(w.cluster.placeholdersOf('zz-copy')).toEqual([]);
    expect(w.cluster.placeholdersOf('ip-203-0-113-1')).toHaveLength(1);
    expect(w.cluster.address('zz-copy')!.status?.phase).toBe('Conflict');
  });

  it('a hold it had from before goes only once the IP’s own address is held', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putAddress({ ...duplicate('zz-copy'), status: { phase: 'Bound' } });
    await w.reconcileAddress('zz-copy'); // alone, it is the address of its IP: held
    expect(w.cluster.placeholdersOf('zz-copy')).toHaveLength(1);
    w.cluster.putAddress(boundAddress());
    expect(await w.reconcileAddress('zz-copy')).toEqual({ requeueAfterMs: expect.any(Number) });
    expect(w.cluster.placeholdersOf('zz-copy')).toHaveLength(1);
    await w.reconcileAddress();
    expect(w.cluster.placeholdersOf('ip-203-0-113-1')).toHaveLength(1);
    await w.reconcileAddress('zz-copy');
    expect(w.cluster.placeholdersOf('zz-copy')).toEqual([]);
  });

  it('a Service carrying the IP for the first address does not put the duplicate in Conflict by the driver, nor is it the duplicate’s', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putClaim(boundClaim());
    w.cluster.putAddress(boundAddress());
    w.cluster.putAddress(duplicate('zz-copy', '203.0.113.1', { phase: 'Available' }));
    w.cluster.putService(tenantService('web', { [CLAIM]: 'web' }));
    await w.reconcileService('web');
    w.cluster.assign('tenant-a', 'web', '203.0.113.1');
    await w.reconcileService('web');
    expect(w.cluster.service('tenant-a', 'web')!.metadata?.annotations?.[PIN]).toBe('203.0.113.1');
    expect(w.cluster.address('zz-copy')!.status?.phase).toBe('Available'); // the core writes its Conflict, not the driver
    expect(w.events.reasons()).not.toContain('Conflict');
  });

  it('the class’s books count the duplicate as conflict, and the IP once against free', () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putAddress(boundAddress());
    w.cluster.putAddress(duplicate('zz-copy', '::ffff:203.0.113.1'));
    const v4 = classBooksOf(w.cluster, w.cluster.ipClass('public')!)!.find((b) => b.family === 'IPv4')!;
    expect(v4.recorded).toBe(2);
    expect(v4.phases.Conflict).toBe(1);
    expect(v4.free).toBe(7n); // 203.0.113.0/29 holds 8; one IP recorded, twice
  });
});
