/** Who may draw from a class (docs/access.md): the core's verdicts on claims, over the in-memory store. */
import { describe, expect, it } from 'vitest';
import type { IPAddressClass } from '../../../api/v1alpha1/index.js';
import { address, available, claim, ipClass, ref, world } from './fixtures.js';

const condition = (c: ReturnType<ReturnType<typeof world>['claimOf']>, type: string) => c?.status?.conditions?.find((x) => x.type === type);
const premiumOnly = { namespaceSelector: { matchLabels: { tier: 'premium' } } };

describe('class access: the namespaceSelector', () => {
  it('a namespace the class does not select: Pending ClassNotAllowed, not stamped, nothing matched, one Warning', async () => {
    const w = world();
    w.store.put(ipClass('public', premiumOnly));
    w.store.put(address('203.0.113.7', {}, available));
    w.store.put(claim());
    await w.reconcileClaim();
    const c = w.claimOf()!;
    expect(c.status?.phase).toBe('Pending');
    expect(condition(c, 'Bound')).toMatchObject({
      status: 'False',
      reason: 'ClassNotAllowed',
      message: `namespace tenant-a may not draw from IPAddressClass public: its spec.namespaceSelector (tier=premium) does not select the namespace's labels`,
    });
    expect(c.metadata.annotations?.['local.sdn.cozystack.io/provisioner']).toBeUndefined();
    expect(w.store.address('ip-203-0-113-7')?.spec.claimRef).toBeUndefined();
    await w.reconcileClaim();
    expect(w.claimEvents.events.filter((e) => e.reason === 'ClassNotAllowed')).toHaveLength(1);
  });

  it('the namespace labelled: the claim is let provision, and matches an Available address', async () => {
    const w = world();
    w.store.put(ipClass('public', premiumOnly));
    w.store.put(address('203.0.113.7', {}, available));
    w.store.put(claim());
    await w.reconcileClaim();
    w.store.namespaces.set('tenant-a', { tier: 'premium' });
    await w.reconcileClaim();
    expect(w.claimOf()!.status?.phase).toBe('Bound');
    expect(w.claimOf()!.metadata.annotations?.['local.sdn.cozystack.io/provisioner']).toBeDefined();
  });

  it('spec.addressName reaches only an address of a class the namespace may use', async () => {
    const w = world();
    w.store.put(ipClass('public', premiumOnly));
    w.store.put(ipClass('open'));
    w.store.put(address('203.0.113.7', {}, available)); // of class public, which tenant-a may not use
    w.store.put(claim({ className: 'public', family: 'IPv4', addressName: 'ip-203-0-113-7' }, 'named'));
    w.store.put(claim({ className: 'open', family: 'IPv4', addressName: 'ip-203-0-113-7' }, 'other-class'));
    await w.reconcileClaim('named');
    await w.reconcileClaim('other-class');
    expect(condition(w.claimOf('named'), 'Bound')).toMatchObject({ reason: 'ClassNotAllowed' });
    expect(w.claimOf('other-class')!.status?.phase).toBe('Pending');
    expect(w.store.address('ip-203-0-113-7')?.spec.claimRef).toBeUndefined();
  });

  it('a namespace not in the cache has no labels: refused until it is', async () => {
    const w = world();
    w.store.put(ipClass('public', premiumOnly));
    w.store.namespaces.set('tenant-a', undefined);
    w.store.put(claim());
    await w.reconcileClaim();
    expect(condition(w.claimOf(), 'Bound')).toMatchObject({ reason: 'ClassNotAllowed' });
  });

  it('a Bound claim whose namespace stops matching keeps its address; ClassAllowed says so, and clears when it matches again', async () => {
    const w = world();
    w.store.namespaces.set('tenant-a', { tier: 'premium' });
    w.store.put(ipClass('public', premiumOnly));
    w.store.put(address('203.0.113.7', {}, available));
    w.store.put(claim());
    await w.reconcileClaim();
    expect(w.claimOf()!.status?.phase).toBe('Bound');
    expect(condition(w.claimOf(), 'ClassAllowed')).toBeUndefined();

    w.store.namespaces.set('tenant-a', {});
    await w.reconcileClaim();
    const c = w.claimOf()!;
    expect(c.status?.phase).toBe('Bound');
    expect(c.status?.addresses).toEqual([{ name: 'ip-203-0-113-7', address: '203.0.113.7' }]);
    expect(condition(c, 'ClassAllowed')).toMatchObject({ status: 'False', reason: 'ClassNotAllowed' });
    expect(condition(c, 'ClassAllowed')?.message).toContain('the claim keeps the addresses it holds');
    expect(w.store.address('ip-203-0-113-7')?.spec.claimRef).toMatchObject(ref());
    expect(w.claimEvents.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'ClassNotAllowed' }));

    w.store.namespaces.set('tenant-a', { tier: 'premium' });
    await w.reconcileClaim();
    expect(condition(w.claimOf(), 'ClassAllowed')).toMatchObject({ status: 'True', reason: 'Allowed' });
  });

  it('a claim let provision, then refused before any address came, is taken off WaitingForProvisioning (its driver stops)', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(claim());
    await w.reconcileClaim();
    expect(condition(w.claimOf(), 'Bound')).toMatchObject({ reason: 'WaitingForProvisioning' });
    w.store.put({ ...w.store.get<IPAddressClass>('IPAddressClass', 'public')!, spec: { ...ipClass().spec, ...premiumOnly } });
    await w.reconcileClaim();
    expect(condition(w.claimOf(), 'Bound')).toMatchObject({ reason: 'ClassNotAllowed' });
  });
});

describe('class access: maxClaimsPerNamespace', () => {
  const names = Array.from({ length: 20 }, (_, i) => `c${String(i).padStart(2, '0')}`);

  it('20 claims reconciled at once against a limit of 2: exactly 2 let provision, 18 ClassLimitReached with the usage', async () => {
    const w = world();
    w.store.slowWrites = true;
    w.store.put(ipClass('public', { maxClaimsPerNamespace: 2 }));
    for (const name of names) {
      w.store.put(claim({ className: 'public', family: 'IPv4' }, name));
    }
    await Promise.all(names.map((n) => w.reconcileClaim(n)));
    const reasons = names.map((n) => condition(w.claimOf(n), 'Bound')?.reason);
    expect(reasons.filter((r) => r === 'WaitingForProvisioning')).toHaveLength(2);
    expect(reasons.filter((r) => r === 'ClassLimitReached')).toHaveLength(18);
    const refused = names.find((n) => condition(w.claimOf(n), 'Bound')?.reason === 'ClassLimitReached')!;
    expect(condition(w.claimOf(refused), 'Bound')?.message).toMatch(
      /^namespace tenant-a holds 2 claims of IPAddressClass public, whose spec.maxClaimsPerNamespace is 2 \(c\d\d, c\d\d\); waiting until one is deleted$/,
    );
    // A second round changes nobody's verdict.
    await Promise.all(names.map((n) => w.reconcileClaim(n)));
    expect(names.map((n) => condition(w.claimOf(n), 'Bound')?.reason)).toEqual(reasons);
  });

  it('counts per namespace and per class: another namespace, or another class, has its own places', async () => {
    const w = world();
    w.store.put(ipClass('public', { maxClaimsPerNamespace: 1 }));
    w.store.put(ipClass('v6'));
    w.store.put(claim({ className: 'public', family: 'IPv4' }, 'a'));
    w.store.put(claim({ className: 'v6', family: 'IPv6' }, 'b'));
    w.store.put({ ...claim({ className: 'public', family: 'IPv4' }, 'c'), metadata: { name: 'c', namespace: 'tenant-b', uid: 'uid-c' } });
    w.store.put(claim({ className: 'public', family: 'IPv4' }, 'd'));
    for (const [n, ns] of [['a', 'tenant-a'], ['b', 'tenant-a'], ['c', 'tenant-b'], ['d', 'tenant-a']] as const) {
      await w.reconcileClaim(n, ns);
    }
    const reason = (ns: string, n: string) => condition(w.store.claim(ns, n), 'Bound')?.reason;
    expect([reason('tenant-a', 'a'), reason('tenant-a', 'b'), reason('tenant-b', 'c'), reason('tenant-a', 'd')]).toEqual([
      'WaitingForProvisioning',
      'WaitingForProvisioning',
      'WaitingForProvisioning',
      'ClassLimitReached',
    ]);
  });

  it('a claim deleted frees its place for the next; a Bound claim is never taken back when the limit drops', async () => {
    const w = world();
    w.store.put(ipClass('public', { maxClaimsPerNamespace: 1 }));
    w.store.put(address('203.0.113.7', {}, available));
    w.store.put(claim({ className: 'public', family: 'IPv4' }, 'a'));
    w.store.put(claim({ className: 'public', family: 'IPv4' }, 'b'));
    await w.reconcileClaim('a');
    await w.reconcileClaim('b');
    expect(w.claimOf('a')!.status?.phase).toBe('Bound');
    expect(condition(w.claimOf('b'), 'Bound')?.reason).toBe('ClassLimitReached');

    w.store.put({ ...w.store.get<IPAddressClass>('IPAddressClass', 'public')!, spec: { ...ipClass().spec, maxClaimsPerNamespace: 0 } });
    await w.reconcileClaim('a');
    expect(w.claimOf('a')!.status?.phase).toBe('Bound');

    w.store.put({ ...w.store.get<IPAddressClass>('IPAddressClass', 'public')!, spec: { ...ipClass().spec, maxClaimsPerNamespace: 1 } });
    w.store.requestDelete('IPAddressClaim', 'a', 'tenant-a');
    await w.reconcileClaim('a'); // reclaims, the finalizer goes, the claim is gone
    await w.reconcileClaim('a');
    expect(w.claimOf('a')).toBeUndefined();
    await w.reconcileClaim('b');
    expect(condition(w.claimOf('b'), 'Bound')?.reason).not.toBe('ClassLimitReached');
  });
});
