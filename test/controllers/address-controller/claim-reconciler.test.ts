import { describe, expect, it } from 'vitest';
import { address, available, claim, defaultClass, ipClass, PROVISIONER, ref, world } from './fixtures.js';
import { notFound } from '../../support/object-store.js';

const condition = (c: ReturnType<ReturnType<typeof world>['claimOf']>, type: string) => c?.status?.conditions?.find((x) => x.type === type);

describe('claim reconciler', () => {
  it('1. explicit class, no addresses: Pending, stamped, className, finalizer, WaitingForProvisioning', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim());
    await w.reconcileClaim();
    const c = w.claimOf()!;
    expect(c.status?.phase).toBe('Pending');
    expect(c.metadata.annotations?.['local.sdn.cozystack.io/provisioner']).toBe(PROVISIONER);
    expect(c.status?.className).toBe('public');
    expect(c.metadata.finalizers).toEqual(['local.sdn.cozystack.io/claim-protection']);
    expect(condition(c, 'Bound')).toMatchObject({ status: 'False', reason: 'WaitingForProvisioning', message: `waiting for provisioner "${PROVISIONER}" to provide IPv4` });
    expect(condition(c, 'ClassResolved')).toMatchObject({ status: 'True', reason: 'Resolved', message: 'resolved to IPAddressClass "public"', observedGeneration: 1 });
  });

  it('keeps a driver’s conditions (types it does not own) and status.associatedTo as the driver wrote them', async () => {
    const w = world();
    w.store.put(ipClass());
    const driverCondition = { type: 'Provisioned', status: 'False' as const, reason: 'ClassExhausted', message: 'full', lastTransitionTime: '2026-01-01T00:00:00Z' };
    const attached = { type: 'Attached', status: 'True' as const, reason: 'Attached', message: 'Service web carries 192.0.2.1', lastTransitionTime: '2026-01-01T00:00:00Z' };
    const associatedTo = { kind: 'Service', namespace: 'tenant-a', name: 'web' };
    w.store.put({ ...claim(), status: { phase: 'Pending', conditions: [driverCondition, attached], associatedTo } });
    await w.reconcileClaim();
    expect(condition(w.claimOf(), 'Provisioned')).toEqual(driverCondition);
    expect(condition(w.claimOf(), 'Attached')).toEqual(attached);
    expect(w.claimOf()?.status?.associatedTo).toEqual(associatedTo);
    expect(condition(w.claimOf(), 'Bound')).toMatchObject({ reason: 'WaitingForProvisioning' });
  });

  it('2. no className resolves to the single default class', async () => {
    const w = world();
    w.store.put(ipClass('other'));
    w.store.put(defaultClass('public'));
    w.store.put(claim({}));
    await w.reconcileClaim();
    expect(w.claimOf()!.status?.className).toBe('public');
  });

  it('3. no className and no default class: NoDefaultClass, with a Warning event', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim({}));
    await w.reconcileClaim();
    expect(condition(w.claimOf(), 'ClassResolved')).toMatchObject({ status: 'False', reason: 'NoDefaultClass' });
    expect(w.claimEvents.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'NoDefaultClass' }));
  });

  it('4. two default classes: MultipleDefaultClasses, listing them sorted', async () => {
    const w = world();
    w.store.put(defaultClass('zeta'));
    w.store.put(defaultClass('alpha'));
    w.store.put(claim({}));
    await w.reconcileClaim();
    expect(condition(w.claimOf(), 'ClassResolved')).toMatchObject({
      reason: 'MultipleDefaultClasses',
      message: 'no className given and 2 IPAddressClasses are marked default: alpha, zeta',
    });
  });

  it('5. a driver pre-bound address (claimRef without UID) is accepted and its UID completed', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim());
    w.store.put(address('203.0.113.7', { claimRef: ref() }));
    await w.reconcileClaim();
    const c = w.claimOf()!;
    expect(c.status?.phase).toBe('Bound');
    expect(c.status?.addresses).toEqual([{ name: 'ip-203-0-113-7', address: '203.0.113.7' }]);
    expect(w.store.address('ip-203-0-113-7')!.spec.claimRef).toEqual(ref('claim-uid-1'));
  });

  it('6. an Available address of the right class and family is matched', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim());
    w.store.put(address('203.0.113.7', {}, available));
    await w.reconcileClaim();
    expect(w.claimOf()!.status?.phase).toBe('Bound');
    expect(w.store.address('ip-203-0-113-7')!.spec.claimRef).toEqual(ref('claim-uid-1'));
    expect(w.claimEvents.reasons()).toEqual(['Matched']); // the Matched Event says the binding; no second one
  });

  it('7. addresses of the wrong class or family are ignored', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(ipClass('private'));
    w.store.put(claim());
    w.store.put(address('203.0.113.7', { className: 'private' }, available));
    w.store.put(address('2001:db8::7', {}, available));
    await w.reconcileClaim();
    expect(w.claimOf()!.status?.phase).toBe('Pending');
    expect(w.store.address('ip-203-0-113-7')!.spec.claimRef).toBeUndefined();
    expect(w.store.address('ip-2001-db8--7')!.spec.claimRef).toBeUndefined();
  });

  it('8. Dual with only v4: Pending with that one address; a v6 later makes it Bound with two', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim({ className: 'public', family: 'Dual' }));
    w.store.put(address('203.0.113.7', {}, available));
    await w.reconcileClaim();
    expect(w.claimOf()!.status).toMatchObject({ phase: 'Pending', addresses: [{ name: 'ip-203-0-113-7', address: '203.0.113.7' }] });
    w.store.put(address('2001:db8::7', {}, available));
    await w.reconcileClaim();
    expect(w.claimOf()!.status).toMatchObject({
      phase: 'Bound',
      addresses: [
        { name: 'ip-2001-db8--7', address: '2001:db8::7' },
        { name: 'ip-203-0-113-7', address: '203.0.113.7' },
      ],
    });
  });

  /** A claim Bound to an address of the default Retain policy, then deleted (its finalizer holds it). */
  async function boundThenDeleted() {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim());
    w.store.put(address('203.0.113.7', {}, available));
    await w.reconcileClaim();
    w.store.requestDelete('IPAddressClaim', 'web', 'tenant-a');
    return w;
  }

  it('9. deleting a claim under Retain: finalizer removed, claim gone, address Released with claimRef', async () => {
    const w = await boundThenDeleted();
    await w.reconcileClaim();
    expect(w.claimOf()).toBeUndefined();
    const a = w.store.address('ip-203-0-113-7')!;
    expect(a.status?.phase).toBe('Released');
    expect(a.spec.claimRef).toEqual(ref('claim-uid-1'));
    expect(w.claimEvents.reasons()).toContain('AddressReleased');
  });

  it('a claim gone by the time its finalizer is removed (cleared by someone else) is done with, not retried', async () => {
    const w = await boundThenDeleted();
    // The cache still shows the deleting claim; the apiserver has let it go already.
    w.store.updateClaim = () => Promise.reject(notFound('ipaddressclaims.local.sdn.cozystack.io', 'web'));
    await expect(w.reconcileClaim()).resolves.toBeUndefined();
    expect(w.store.address('ip-203-0-113-7')!.status?.phase).toBe('Released');
  });

  it('10. deleting a claim under Delete deletes the address', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim());
    w.store.put(address('203.0.113.7', { reclaimPolicy: 'Delete' }, available));
    await w.reconcileClaim();
    w.store.requestDelete('IPAddressClaim', 'web', 'tenant-a');
    await w.reconcileClaim();
    expect(w.store.address('ip-203-0-113-7')).toBeUndefined();
    expect(w.claimEvents.reasons()).toContain('AddressDeleted');
  });

  it('11. a Bound claim whose class is gone stays Bound, className sticky, addresses maintained', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim());
    w.store.put(address('203.0.113.7', {}, available));
    await w.reconcileClaim();
    w.store.requestDelete('IPAddressClass', 'public');
    await w.reconcileClaim();
    expect(w.claimOf()!.status).toMatchObject({ phase: 'Bound', className: 'public', addresses: [{ name: 'ip-203-0-113-7', address: '203.0.113.7' }] });
  });

  it('12. a Pending claim naming a missing class: ClassNotFound', async () => {
    const w = world();
    w.store.put(claim({ className: 'nope' }));
    await w.reconcileClaim();
    expect(w.claimOf()!.status?.phase).toBe('Pending');
    expect(condition(w.claimOf(), 'ClassResolved')).toMatchObject({ reason: 'ClassNotFound', message: 'IPAddressClass "nope" not found' });
    expect(w.claimOf()!.status?.className).toBeUndefined();
  });

  it('13. a Bound claim whose address disappeared becomes Lost; it comes back Bound by itself', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim());
    w.store.put(address('203.0.113.7', {}, available));
    await w.reconcileClaim();
    w.store.requestDelete('IPAddress', 'ip-203-0-113-7');
    await w.reconcileClaim();
    expect(w.claimOf()!.status?.phase).toBe('Lost');
    expect(condition(w.claimOf(), 'Bound')).toMatchObject({ reason: 'AddressLost' });
    w.store.put(address('203.0.113.9', {}, available));
    await w.reconcileClaim();
    expect(w.claimOf()!.status?.phase).toBe('Bound');
  });
});

describe('claim reconciler: beyond the Go suite', () => {
  it('Dual with both families available binds both in one pass', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim({ className: 'public', family: 'Dual' }));
    w.store.put(address('203.0.113.7', {}, available));
    w.store.put(address('2001:db8::7', {}, available));
    await w.reconcileClaim();
    expect(w.claimOf()!.status?.phase).toBe('Bound');
    expect(w.claimOf()!.status?.addresses).toHaveLength(2);
  });

  it('picks the lexicographically smallest candidate', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim());
    w.store.put(address('203.0.113.9', {}, available));
    w.store.put(address('203.0.113.10', {}, available));
    await w.reconcileClaim();
    expect(w.store.address('ip-203-0-113-10')!.spec.claimRef).toBeDefined();
    expect(w.store.address('ip-203-0-113-9')!.spec.claimRef).toBeUndefined();
  });

  it('addressName pins the claim to that address, not the smallest', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim({ className: 'public', addressName: 'ip-203-0-113-9' }));
    w.store.put(address('203.0.113.7', {}, available));
    w.store.put(address('203.0.113.9', {}, available));
    await w.reconcileClaim();
    expect(w.store.address('ip-203-0-113-9')!.spec.claimRef).toEqual(ref('claim-uid-1'));
    expect(w.store.address('ip-203-0-113-7')!.spec.claimRef).toBeUndefined();
  });

  it('addressName naming a missing address: Pending, a precise condition and a Warning event', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim({ className: 'public', addressName: 'ip-203-0-113-99' }));
    await w.reconcileClaim();
    expect(condition(w.claimOf(), 'Bound')).toMatchObject({
      reason: 'WaitingForProvisioning',
      message: 'waiting for IPAddress "ip-203-0-113-99" (spec.addressName), which does not exist',
    });
    expect(w.claimEvents.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'AddressNotFound' }));
  });

  it('a concurrent match: the first write gets 409, the retry takes the second candidate', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim());
    w.store.put(claim({ className: 'public' }, 'other'));
    w.store.put(address('203.0.113.7', {}, available));
    w.store.put(address('203.0.113.8', {}, available));
    // Another claim binds .7 just before our write lands.
    w.store.interfere('IPAddress', 'ip-203-0-113-7', undefined, () => {
      const a = w.store.address('ip-203-0-113-7')!;
      w.store.put({ ...a, spec: { ...a.spec, claimRef: { namespace: 'tenant-a', name: 'other', uid: 'claim-uid-other' } } });
    });
    await expect(w.reconcileClaim()).rejects.toMatchObject({ code: 409 });
    expect(w.claimEvents.reasons()).toContain('MatchConflict');
    await w.reconcileClaim(); // the work queue's retry
    expect(w.store.address('ip-203-0-113-8')!.spec.claimRef).toEqual(ref('claim-uid-1'));
    expect(w.store.address('ip-203-0-113-7')!.spec.claimRef?.name).toBe('other');
    expect(w.claimOf()!.status?.phase).toBe('Bound');
  });

  it('status is idempotent: a second pass writes nothing', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim());
    w.store.put(address('203.0.113.7', {}, available));
    await w.reconcileClaim();
    const writes = w.store.writes.length;
    const events = w.claimEvents.events.length;
    await w.reconcileClaim();
    expect(w.store.writes.length).toBe(writes);
    expect(w.claimEvents.events.length).toBe(events);
  });

  it('a Pending claim also writes nothing on a second pass', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim());
    await w.reconcileClaim();
    const writes = w.store.writes.length;
    await w.reconcileClaim();
    expect(w.store.writes.length).toBe(writes);
  });

  it('reclaim with an unknown policy is treated as Retain', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim());
    w.store.put(address('203.0.113.7', { reclaimPolicy: 'Recycle' as 'Retain' }, available));
    await w.reconcileClaim();
    w.store.requestDelete('IPAddressClaim', 'web', 'tenant-a');
    await w.reconcileClaim();
    expect(w.store.address('ip-203-0-113-7')!.status?.phase).toBe('Released');
  });

  it('an unknown family: Pending with InvalidFamily and a Warning, nothing bound', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim({ className: 'public', family: 'IPv5' as 'IPv4' }));
    w.store.put(address('203.0.113.7', {}, available));
    await w.reconcileClaim();
    expect(condition(w.claimOf(), 'Bound')).toMatchObject({ reason: 'InvalidFamily', message: 'spec.family "IPv5" is not one of IPv4, IPv6, Dual' });
    expect(w.claimEvents.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'InvalidFamily' }));
    expect(w.store.address('ip-203-0-113-7')!.spec.claimRef).toBeUndefined();
  });

  it('a class without provisioner: InvalidClass, nothing stamped', async () => {
    const w = world();
    w.store.put({ ...ipClass(), spec: {} as never });
    w.store.put(claim());
    await w.reconcileClaim();
    expect(condition(w.claimOf(), 'ClassResolved')).toMatchObject({ reason: 'InvalidClass', message: 'IPAddressClass "public" has no spec.provisioner' });
    expect(w.claimOf()!.metadata.annotations?.['local.sdn.cozystack.io/provisioner']).toBeUndefined();
  });

  it('a stale binding from an earlier claim of the same name is not counted', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim());
    w.store.put(address('203.0.113.7', { claimRef: ref('an-older-claim') }, { phase: 'Released' }));
    await w.reconcileClaim();
    expect(w.claimOf()!.status?.addresses).toEqual([]);
    expect(w.store.address('ip-203-0-113-7')!.spec.claimRef?.uid).toBe('an-older-claim');
  });

  it('concurrent passes of two claims of one class take different candidates, without a 409', async () => {
    const w = world();
    w.store.slowWrites = true;
    w.store.put(ipClass());
    w.store.put(claim(undefined, 'web'));
    w.store.put(claim(undefined, 'api'));
    w.store.put(address('203.0.113.7', {}, available));
    w.store.put(address('203.0.113.8', {}, available));
    await Promise.all([w.reconcileClaim('web'), w.reconcileClaim('api')]);
    const bound = ['web', 'api'].map((n) => w.claimOf(n)!.status?.addresses?.map((a) => a.address));
    expect(bound.flat().sort()).toEqual(['203.0.113.7', '203.0.113.8']);
    expect(w.claimEvents.events.map((e) => e.reason)).not.toContain('MatchConflict');
  });

  it('a pinned name another pass is writing is retried, not reported missing', async () => {
    const w = world();
    w.store.slowWrites = true;
    w.store.put(ipClass());
    w.store.put(claim(undefined, 'web'));
    w.store.put(claim({ className: 'public', family: 'IPv4', addressName: 'ip-203-0-113-7' }, 'api'));
    w.store.put(address('203.0.113.7', {}, available));
    const [first, second] = await Promise.allSettled([w.reconcileClaim('web'), w.reconcileClaim('api')]);
    expect(first.status).toBe('fulfilled');
    expect(second).toMatchObject({ status: 'rejected', reason: { message: 'IPAddress ip-203-0-113-7 is being bound by another pass' } });
  });

  it('a new claim costs one metadata write (finalizer and stamp together) and one status write', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim());
    await w.reconcileClaim();
    expect(w.store.writes).toEqual(['update IPAddressClaim/web', 'status IPAddressClaim/web']);
    const c = w.claimOf()!;
    expect(c.metadata.finalizers).toEqual(['local.sdn.cozystack.io/claim-protection']);
    expect(c.metadata.annotations?.['local.sdn.cozystack.io/provisioner']).toBe(PROVISIONER);
  });

  it('addressSummary lists every bound IP, for the Addresses column', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim({ className: 'public', family: 'Dual' }));
    w.store.put(address('203.0.113.7', {}, available));
    w.store.put(address('2001:db8::7', {}, available));
    await w.reconcileClaim();
    const status = w.claimOf()!.status!;
    expect(status.phase).toBe('Bound');
    expect(status.addressSummary).toBe(status.addresses!.map((a) => a.address).join(','));
    expect(status.addressSummary!.split(',').sort()).toEqual(['2001:db8::7', '203.0.113.7']);
  });
});
