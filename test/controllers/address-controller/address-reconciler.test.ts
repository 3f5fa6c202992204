import { describe, expect, it } from 'vitest';
import { address, available, claim, ipClass, ref, world } from './fixtures.js';

const PROTECTION = 'local.sdn.cozystack.io/address-protection';

describe('address reconciler', () => {
  it('1. an unbound address becomes Available and gets the address-protection finalizer', async () => {
    const w = world();
    w.store.put(address('203.0.113.7'));
    await w.reconcileAddress('ip-203-0-113-7');
    const a = w.store.address('ip-203-0-113-7')!;
    expect(a.status?.phase).toBe('Available');
    expect(a.metadata.finalizers).toEqual([PROTECTION]);
  });

  it('2. a claimRef naming a live claim with matching UID becomes Bound', async () => {
    const w = world();
    w.store.put(claim());
    w.store.put(address('203.0.113.7', { claimRef: ref('claim-uid-1') }));
    await w.reconcileAddress('ip-203-0-113-7');
    expect(w.store.address('ip-203-0-113-7')!.status?.phase).toBe('Bound');
  });

  it('3. a pre-bound address with an empty claimRef UID is not marked Bound', async () => {
    const w = world();
    w.store.put(claim());
    w.store.put(address('203.0.113.7', { claimRef: ref() }));
    await w.reconcileAddress('ip-203-0-113-7');
    expect(w.store.address('ip-203-0-113-7')!.status?.phase).toBeUndefined();
  });

  it('4. orphan with Retain becomes Released and keeps its claimRef', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(address('203.0.113.7', { claimRef: ref('claim-uid-1') }));
    await w.reconcileAddress('ip-203-0-113-7');
    const a = w.store.address('ip-203-0-113-7')!;
    expect(a.status?.phase).toBe('Released');
    expect(a.spec.claimRef).toEqual(ref('claim-uid-1'));
    expect(w.addressEvents.reasons()).toEqual(['Reclaimed']);
  });

  it('5. orphan with Delete is deleted: the first pass deletes, the second releases the finalizer', async () => {
    const w = world();
    w.store.put(address('203.0.113.7', { claimRef: ref('claim-uid-1'), reclaimPolicy: 'Delete' }));
    await w.reconcileAddress('ip-203-0-113-7');
    expect(w.store.address('ip-203-0-113-7')!.metadata.deletionTimestamp).toBeDefined();
    await w.reconcileAddress('ip-203-0-113-7');
    expect(w.store.address('ip-203-0-113-7')).toBeUndefined();
  });

  it('6. a claimRef UID that does not match the live claim (stale binding) triggers reclaim', async () => {
    const w = world();
    w.store.put(claim());
    w.store.put(address('203.0.113.7', { claimRef: ref('an-older-claim') }));
    await w.reconcileAddress('ip-203-0-113-7');
    expect(w.store.address('ip-203-0-113-7')!.status?.phase).toBe('Released');
  });

  it.each(['Conflict', 'Lost'] as const)('7. the sticky phase %s is never overwritten, even without claimRef', async (phase) => {
    const w = world();
    w.store.put(address('203.0.113.7', {}, { phase }));
    await w.reconcileAddress('ip-203-0-113-7');
    expect(w.store.address('ip-203-0-113-7')!.status?.phase).toBe(phase);
  });

  it('8. deleting a Bound address whose claim is live keeps address-protection', async () => {
    const w = world();
    w.store.put(claim());
    w.store.put({ ...address('203.0.113.7', { claimRef: ref('claim-uid-1') }, { phase: 'Bound' }), metadata: { name: 'ip-203-0-113-7', finalizers: [PROTECTION] } });
    w.store.requestDelete('IPAddress', 'ip-203-0-113-7');
    await w.reconcileAddress('ip-203-0-113-7');
    expect(w.store.address('ip-203-0-113-7')!.metadata.finalizers).toEqual([PROTECTION]);
    expect(w.addressEvents.events).toEqual([
      expect.objectContaining({ type: 'Warning', reason: 'DeletionBlocked', message: expect.stringContaining('tenant-a/web') }),
    ]);
  });

  it('8b. once the claim is gone, the blocked deletion completes', async () => {
    const w = world();
    w.store.put({ ...address('203.0.113.7', { claimRef: ref('claim-uid-1') }, { phase: 'Bound' }), metadata: { name: 'ip-203-0-113-7', finalizers: [PROTECTION] } });
    w.store.requestDelete('IPAddress', 'ip-203-0-113-7');
    await w.reconcileAddress('ip-203-0-113-7');
    expect(w.store.address('ip-203-0-113-7')).toBeUndefined();
  });

  it('9. an unparsable spec.address stays Pending, with a Warning event naming it', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put({ ...address('203.0.113.7'), spec: { ...address('x').spec, address: 'not-an-ip' }, metadata: { name: 'ip-bad' } });
    await w.reconcileAddress('ip-bad');
    expect(w.store.address('ip-bad')!.status?.phase).toBe('Pending');
    expect(w.addressEvents.events).toEqual([
      expect.objectContaining({ type: 'Warning', reason: 'InvalidAddress', message: 'spec.address "not-an-ip" is not an IP address' }),
    ]);
    // A second pass changes nothing and does not repeat the event.
    const writes = w.store.writes.length;
    await w.reconcileAddress('ip-bad');
    expect(w.store.writes.length).toBe(writes);
  });

  it('an available address that is already Available writes nothing', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put({ ...address('203.0.113.7', {}, available), metadata: { name: 'ip-203-0-113-7', finalizers: [PROTECTION] } });
    await w.reconcileAddress('ip-203-0-113-7');
    expect(w.store.writes).toEqual([]);
  });
});
