/** One IP, one IPAddress, as the core keeps it (docs/binding.md, "Duplicates"). */
import { describe, expect, it } from 'vitest';
import type { IPAddress } from '../../../api/v1alpha1/index.js';
import { address, claim, ipClass, ref, world } from './fixtures.js';

/** A hand-made IPAddress named `name`, created at second `second` of the day. */
function named(name: string, ip: string, second: number, extra: Partial<IPAddress['spec']> = {}): IPAddress {
  const a = address(ip, extra);
  return { ...a, metadata: { name, creationTimestamp: new Date(Date.UTC(2026, 11, 2, 0, 0, second)) } };
}

const condition = (a: IPAddress | undefined, type: string) => a?.status?.conditions?.find((c) => c.type === type);

async function settle(w: ReturnType<typeof world>, names: string[]) {
  for (let round = 0; round < 2; round++) {
    for (const name of names) {
      await w.reconcileAddress(name);
    }
  }
}

describe('duplicate IPAddresses', () => {
  it('the earliest of one IP is Available; later ones, however spelled, are Conflict naming it and said once', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(named('dup-b', '192.0.2.131', 2));
    w.store.put(named('dup-a', '192.0.2.131', 1));
    w.store.put(named('dup-c', '::ffff:192.0.2.131', 3));
    await settle(w, ['dup-a', 'dup-b', 'dup-c']);
    expect(w.store.address('dup-a')!.status?.phase).toBe('Available');
    expect(condition(w.store.address('dup-a'), 'Unique')).toBeUndefined();
    for (const name of ['dup-b', 'dup-c']) {
      const a = w.store.address(name)!;
      expect(a.status?.phase).toBe('Conflict');
      expect(condition(a, 'Unique')).toMatchObject({ status: 'False', reason: 'DuplicateIP' });
      expect(condition(a, 'Unique')!.message).toContain('IPAddress dup-a');
    }
    expect(w.addressEvents.events.filter((e) => e.reason === 'DuplicateIP').map((e) => e.object).sort()).toEqual(['IPAddress/dup-b', 'IPAddress/dup-c']);
  });

  it('created in the same second, the smaller name has the IP', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(named('z-first', '192.0.2.131', 1));
    w.store.put(named('a-second', '192.0.2.131', 1));
    await settle(w, ['z-first', 'a-second']);
    expect(w.store.address('a-second')!.status?.phase).toBe('Available');
    expect(w.store.address('z-first')!.status?.phase).toBe('Conflict');
  });

  it('three claims for one IP recorded three times: exactly one binds it', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(named('dup-a', '192.0.2.131', 1));
    w.store.put(named('dup-b', '192.0.2.131', 2));
    w.store.put(named('dup-c', '::ffff:192.0.2.131', 3));
    await settle(w, ['dup-a', 'dup-b', 'dup-c']);
    for (const name of ['h1', 'h2', 'h3']) {
      w.store.put(claim({ className: 'public', family: 'IPv4' }, name));
      await w.reconcileClaim(name);
    }
    const bound = ['h1', 'h2', 'h3'].filter((n) => w.claimOf(n)!.status?.phase === 'Bound');
    expect(bound).toEqual(['h1']);
    expect(w.claimOf('h1')!.status?.addresses).toEqual([{ name: 'dup-a', address: '192.0.2.131' }]);
    for (const name of ['h2', 'h3']) {
      expect(w.claimOf(name)!.status?.conditions?.find((c) => c.type === 'Bound')?.reason).toBe('WaitingForProvisioning');
    }
    expect(w.store.address('dup-b')!.spec.claimRef).toBeUndefined();
    expect(w.store.address('dup-c')!.spec.claimRef).toBeUndefined();
  });

  it('a duplicate even in phase Available (its Conflict not written yet) is never matched', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(named('dup-a', '192.0.2.131', 1, { claimRef: { namespace: 'tenant-b', name: 'other', uid: 'u-other' } }));
    w.store.put({ ...named('dup-b', '192.0.2.131', 2), status: { phase: 'Available' } });
    w.store.put(claim());
    await w.reconcileClaim();
    expect(w.claimOf()!.status?.phase).toBe('Pending');
    expect(w.store.address('dup-b')!.spec.claimRef).toBeUndefined();
  });

  it('spec.addressName naming a duplicate does not bind it', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(named('dup-a', '192.0.2.131', 1));
    w.store.put(named('dup-b', '192.0.2.131', 2));
    await settle(w, ['dup-a', 'dup-b']);
    w.store.put(claim({ className: 'public', family: 'IPv4', addressName: 'dup-b' }));
    await w.reconcileClaim();
    expect(w.claimOf()!.status?.phase).toBe('Pending');
    expect(w.store.address('dup-b')!.spec.claimRef).toBeUndefined();
  });

  it('a duplicate pre-bound to a claim is not its address: not listed, not completed, no new match, the claim says why', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(named('dup-a', '192.0.2.131', 1));
    w.store.put(named('dup-b', '192.0.2.131', 2, { claimRef: ref() }));
    w.store.put(address('192.0.2.10', {}, { phase: 'Available' }));
    w.store.put(claim());
    await w.reconcileClaim();
    const status = w.claimOf()!.status!;
    expect(status.phase).toBe('Pending');
    expect(status.addresses).toEqual([]);
    const bound = status.conditions?.find((c) => c.type === 'Bound');
    expect(bound).toMatchObject({ status: 'False', reason: 'DuplicateAddress' });
    expect(bound!.message).toContain('IPAddress dup-b (192.0.2.131)');
    expect(bound!.message).toContain('IPAddress dup-a');
    expect(w.store.address('dup-b')!.spec.claimRef?.uid).toBeUndefined();
    expect(w.store.address('ip-192-0-2-10')!.spec.claimRef).toBeUndefined();
    expect(w.claimEvents.reasons()).toEqual(['DuplicateAddress']);
  });

  it('once the earlier address is gone, the duplicate is the address of its IP again: Available, Unique True, a candidate', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(named('dup-a', '192.0.2.131', 1));
    w.store.put(named('dup-b', '192.0.2.131', 2));
    await settle(w, ['dup-a', 'dup-b']);
    w.store.requestDelete('IPAddress', 'dup-a');
    await w.reconcileAddress('dup-a'); // lets its finalizer go
    expect(w.store.address('dup-a')).toBeUndefined();
    await w.reconcileAddress('dup-b');
    const b = w.store.address('dup-b')!;
    expect(b.status?.phase).toBe('Available');
    expect(condition(b, 'Unique')).toMatchObject({ status: 'True', reason: 'Unique' });
    expect(w.addressEvents.reasons()).toContain('DuplicateResolved');
    w.store.put(claim());
    await w.reconcileClaim();
    expect(w.claimOf()!.status?.addresses).toEqual([{ name: 'dup-b', address: '192.0.2.131' }]);
  });

  it('a pre-bound duplicate whose earlier address goes is completed and bound to its claim', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(named('dup-a', '192.0.2.131', 1));
    w.store.put(named('dup-b', '192.0.2.131', 2, { claimRef: ref() }));
    w.store.put(claim());
    await settle(w, ['dup-a', 'dup-b']);
    await w.reconcileClaim();
    expect(w.store.address('dup-b')!.status?.phase).toBe('Conflict');
    w.store.requestDelete('IPAddress', 'dup-a');
    await w.reconcileAddress('dup-a');
    await w.reconcileAddress('dup-b');
    expect(w.store.address('dup-b')!.status?.phase).toBe('Pending');
    await w.reconcileClaim();
    await w.reconcileAddress('dup-b');
    expect(w.claimOf()!.status?.phase).toBe('Bound');
    expect(w.store.address('dup-b')!.status?.phase).toBe('Bound');
  });

  it('the claim of a duplicate under Retain is deleted: the duplicate stays Conflict, not Released', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(named('dup-a', '192.0.2.131', 1));
    w.store.put(named('dup-b', '192.0.2.131', 2, { claimRef: ref('claim-uid-1') }));
    w.store.put(claim());
    await w.reconcileClaim(); // finalizer
    await settle(w, ['dup-a', 'dup-b']);
    w.store.requestDelete('IPAddressClaim', 'web', 'tenant-a');
    await w.reconcileClaim();
    await w.reconcileAddress('dup-b');
    expect(w.store.address('dup-b')!.status?.phase).toBe('Conflict');
  });
});

describe('an IPAddress of a class that does not exist', () => {
  it('gets ClassResolved=False/ClassNotFound and a Warning once; True again, with a Normal Event, when the class comes', async () => {
    const w = world();
    w.store.put(address('192.0.2.7', { className: 'nope' }));
    await w.reconcileAddress('ip-192-0-2-7');
    await w.reconcileAddress('ip-192-0-2-7');
    const a = w.store.address('ip-192-0-2-7')!;
    expect(condition(a, 'ClassResolved')).toMatchObject({ status: 'False', reason: 'ClassNotFound', message: 'IPAddressClass "nope" not found' });
    expect(w.addressEvents.reasons()).toEqual(['ClassNotFound']);
    w.store.put(ipClass('nope'));
    await w.reconcileAddress('ip-192-0-2-7');
    expect(condition(w.store.address('ip-192-0-2-7'), 'ClassResolved')).toMatchObject({ status: 'True', reason: 'Resolved' });
    expect(w.addressEvents.reasons()).toEqual(['ClassNotFound', 'ClassFound']);
  });

  it('an address of an existing class carries no such condition and costs no write', async () => {
    const w = world();
    w.store.put(ipClass());
    w.store.put(address('192.0.2.7', {}, { phase: 'Available' }));
    await w.reconcileAddress('ip-192-0-2-7'); // the finalizer
    const writes = w.store.writes.length;
    await w.reconcileAddress('ip-192-0-2-7');
    expect(w.store.writes.length).toBe(writes);
    expect(w.store.address('ip-192-0-2-7')!.status?.conditions).toBeUndefined();
  });
});
