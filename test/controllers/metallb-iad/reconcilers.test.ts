import * as k8s from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { HOLD_RETRY_FIRST_MS, retryUnassignedHold } from '../../../controllers/metallb-iad/holds.js';
import type { MetallbObject } from '../../../controllers/metallb-iad/store.js';
import { boundAddress, boundClaim, pendingClaim, PH, publicClass, tenantService, world } from './fixtures.js';

const PIN = 'metallb.io/loadBalancerIPs';
const MARKER = 'metallb.drivers.local.sdn.cozystack.io/pinned';
const CLAIM = 'local.sdn.cozystack.io/ip-address-claim';
const CARRIER = 'metallb.drivers.local.sdn.cozystack.io/carrier';
const HOLD_RETRIED = 'metallb.drivers.local.sdn.cozystack.io/hold-retried-at';

describe('class controller', () => {
  it('1. renders the pool (autoAssign false, owned by the class) and the advertisement', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass();
    const pool = w.cluster.pools.get('IPAddressPool/iad-public')!;
    expect(pool.metadata).toMatchObject({ name: 'iad-public', namespace: 'metallb-system', ownerReferences: [{ kind: 'IPAddressClass', name: 'public' }] });
    expect(pool.spec).toEqual({
      addresses: ['203.0.113.0/29', '2001:db8::/126'],
      autoAssign: false,
      // Only the driver's carriers may hold its IPs: an unlabelled Service loses one, an admin's pin gets none.
      serviceAllocation: { serviceSelectors: [{ matchLabels: { [CARRIER]: 'true' } }] },
    });
    expect(w.cluster.pools.get('L2Advertisement/iad-public')!.spec).toEqual({ ipAddressPools: ['iad-public'] });
  });

  it('a second pass writes neither the pool nor the advertisement; a drifted advertisement is rewritten alone', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass();
    const written = w.cluster.log.length;
    await w.reconcileClass();
    expect(w.cluster.log.length).toBe(written);
    w.cluster.pools.get('L2Advertisement/iad-public')!.spec = { ipAddressPools: ['someone-elses'] };
    w.cluster.pools.get('IPAddressPool/iad-public')!.spec!.avoidBuggyIPs = false; // an apiserver default, not drift
    await w.reconcileClass();
    expect(w.cluster.log.slice(written)).toEqual(['apply L2Advertisement/iad-public']);
  });

  it('2. ignores a class of another provisioner', async () => {
    const w = world();
    w.cluster.putClass(publicClass({ provisioner: 'other' }));
    await w.reconcileClass();
    expect(w.cluster.pools.size).toBe(0);
  });

  it('invalid parameters: one Warning event, and no pool written', async () => {
    const w = world();
    w.cluster.putClass(publicClass({ parameters: { addresses: ['203.0.113.7'] } }));
    await w.reconcileClass();
    await w.reconcileClass();
    expect(w.cluster.pools.size).toBe(0);
    expect(w.events.events).toEqual([
      expect.objectContaining({ type: 'Warning', reason: 'InvalidClassParameters', message: expect.stringContaining('"203.0.113.7" is neither a CIDR nor a range') }),
    ]);
  });

  it('a class overlapping a served class gets a Warning and no pool; the first keeps its range', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass();
    w.cluster.putClass({ ...publicClass({ parameters: { addresses: ['203.0.113.4-203.0.113.12'] } }), metadata: { name: 'late', uid: 'class-uid-late' } });
    await w.reconcileClass('late');
    expect(w.cluster.pools.has('IPAddressPool/iad-late')).toBe(false);
    expect(w.events.events).toEqual([
      expect.objectContaining({ type: 'Warning', reason: 'OverlappingClassParameters', message: expect.stringContaining('IPAddressClass "public"') }),
    ]);
    await w.reconcileClass(); // the first class is unaffected
    expect(w.cluster.pools.get('IPAddressPool/iad-public')!.spec?.addresses).toEqual(['203.0.113.0/29', '2001:db8::/126']);
  });

  it('MetalLB objects the apiserver refuses (no MetalLB CRDs): a Warning on the class, retried', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    const message = 'the server could not find the requested resource';
    w.cluster.apply = async () => {
      throw new k8s.ApiException(404, 'NotFound', JSON.stringify({ reason: 'NotFound', message }), {});
    };
    await expect(w.reconcileClass()).rejects.toThrow();
    expect(w.events.events).toContainEqual(expect.objectContaining({ object: 'IPAddressClass/public', type: 'Warning', reason: 'BackendFailed', message: expect.stringContaining(message) }));
  });

  it('updates the pool when the parameters change', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass();
    w.cluster.putClass(publicClass({ parameters: { addresses: ['198.51.100.0/28'] } }));
    await w.reconcileClass();
    expect(w.cluster.pools.get('IPAddressPool/iad-public')!.spec?.addresses).toEqual(['198.51.100.0/28']);
  });
});

describe('claim controller', () => {
  it('1. reserves through one unpinned placeholder, and no IPAddress yet', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    w.cluster.putClaim(pendingClaim());
    expect(await w.reconcileClaim()).toEqual({ requeueAfterMs: 120_000 });
    const placeholders = w.cluster.placeholders();
    expect(placeholders.map((p) => p.metadata?.name)).toEqual(['iad-claim-uid-1-v4']);
    expect(placeholders[0]!.metadata?.annotations?.['metallb.io/address-pool']).toBe('iad-public');
    expect(placeholders[0]!.metadata?.annotations?.[PIN]).toBeUndefined();
    expect(w.cluster.addresses.size).toBe(0);
    expect(w.events.reasons()).toEqual([]); // asking MetalLB is no news; a long wait is (WaitingForMetalLB)
  });

  it('1b. says so on the claim, once, when MetalLB has assigned nothing from the pool for two minutes, and not before', async () => {
    let now = Date.now();
    const w = world(() => now);
    w.cluster.putClass(publicClass());
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    w.cluster.putClaim(pendingClaim());
    await w.reconcileClaim();
    now += 60_000;
    await w.reconcileClaim();
    expect(w.events.reasons()).toEqual([]);
    now += 90_000;
    await w.reconcileClaim();
    expect(w.events.reasons()).toEqual(['WaitingForMetalLB']);
    expect(w.events.events.at(-1)?.message).toMatch(/in 150 s, nor any other from that pool in 150 s/);
    await w.reconcileClaim(); // the next requeue: said once is enough
    expect(w.events.reasons()).toEqual(['WaitingForMetalLB']);
  });

  it('1c. a long wait while MetalLB still hands out addresses from the pool is a queue, not news: no Event', async () => {
    let now = Date.now();
    const w = world(() => now);
    w.cluster.putClass(publicClass());
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    const other = { ...pendingClaim(), metadata: { ...pendingClaim().metadata, name: 'api', uid: 'claim-uid-2' } };
    w.cluster.putClaim(pendingClaim());
    w.cluster.putClaim(other);
    await w.reconcileClaim();
    await w.reconcileClaim('api');
    now += 100_000;
    w.cluster.assign(PH, 'iad-claim-uid-2-v4', '203.0.113.2');
    await w.reconcileClaim('api'); // MetalLB served the claim made alongside
    now += 50_000;
    await w.reconcileClaim();
    expect(w.events.reasons()).toEqual(['Provisioned']);
    now += 120_000; // and then nothing more from the pool for two minutes: now it is news
    await w.reconcileClaim();
    expect(w.events.reasons()).toEqual(['Provisioned', 'WaitingForMetalLB']);
  });

  it('2. records what MetalLB assigned: an IPAddress, a pinned, linked placeholder owned by it', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    w.cluster.putClaim(pendingClaim());
    await w.reconcileClaim();
    w.cluster.assign(PH, 'iad-claim-uid-1-v4', '203.0.113.7');
    await w.reconcileClaim();
    const address = w.cluster.address('ip-203-0-113-7')!;
    expect(address.spec).toEqual({
      className: 'public',
      address: '203.0.113.7',
      reclaimPolicy: 'Retain',
      claimRef: { namespace: 'tenant-a', name: 'web', uid: 'claim-uid-1' },
      source: { fromClass: {} },
    });
    expect(address.metadata.finalizers).toEqual(['metallb.drivers.local.sdn.cozystack.io/teardown', 'local.sdn.cozystack.io/address-protection']);
    const placeholder = w.cluster.service(PH, 'iad-claim-uid-1-v4')!;
    expect(placeholder.metadata?.annotations?.[PIN]).toBe('203.0.113.7');
    expect(placeholder.metadata?.labels?.['metallb.drivers.local.sdn.cozystack.io/ip-address']).toBe('ip-203-0-113-7');
    expect(placeholder.metadata?.ownerReferences).toEqual([expect.objectContaining({ kind: 'IPAddress', name: 'ip-203-0-113-7', uid: address.metadata.uid })]);
    // The driver never writes claim status, core phases, core finalizers.
    expect(w.cluster.log.filter((l) => l.includes('IPAddressClaim'))).toEqual([]);
    expect(address.status).toBeUndefined();
  });

  it('3. a Dual claim gets two placeholders, then one IPv4 and one IPv6 address', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    w.cluster.putClaim(pendingClaim({ className: 'public', family: 'Dual' }));
    await w.reconcileClaim();
    expect(w.cluster.placeholders().map((p) => p.metadata?.name).sort()).toEqual(['iad-claim-uid-1-v4', 'iad-claim-uid-1-v6']);
    w.cluster.assign(PH, 'iad-claim-uid-1-v4', '203.0.113.1');
    w.cluster.assign(PH, 'iad-claim-uid-1-v6', '2001:db8::1');
    await w.reconcileClaim();
    expect([...w.cluster.addresses.keys()].sort()).toEqual(['ip-2001-db8--1', 'ip-203-0-113-1']);
  });

  it('records the first address of an IPv6 range (2001:db8::) under a name the apiserver accepts', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    w.cluster.putClaim(pendingClaim({ className: 'public', family: 'IPv6' }));
    await w.reconcileClaim();
    w.cluster.assign(PH, 'iad-claim-uid-1-v6', '2001:db8::');
    await w.reconcileClaim();
    expect(w.cluster.address('ip-2001-db8--0')!.spec.address).toBe('2001:db8::');
  });

  it('an IPAddress the apiserver refuses: a Warning on the claim, the error retried, the reservation kept', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    w.cluster.putClaim(pendingClaim());
    await w.reconcileClaim();
    w.cluster.assign(PH, 'iad-claim-uid-1-v4', '203.0.113.1');
    w.cluster.createAddress = async () => {
      throw new k8s.ApiException(403, 'Forbidden', JSON.stringify({ reason: 'Forbidden', message: 'ipaddresses is forbidden' }), {});
    };
    await expect(w.reconcileClaim()).rejects.toThrow();
    expect(w.events.events).toContainEqual(
      expect.objectContaining({ type: 'Warning', reason: 'RecordFailed', message: expect.stringContaining('203.0.113.1') }),
    );
    expect(w.events.events.at(-1)!.message).toContain('ipaddresses is forbidden');
    // Not pinned yet (that comes with the handoff), but still holding what MetalLB assigned it.
    expect(w.cluster.placeholders().map((p) => p.status?.loadBalancer?.ingress?.map((i) => i.ip))).toEqual([['203.0.113.1']]);
  });

  it('a placeholder the apiserver refuses (IPv6 on a cluster without IPv6 Services): a Warning on the claim, retried', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    w.cluster.putClaim(pendingClaim({ className: 'public', family: 'IPv6' }));
    const message = 'Service "iad-claim-uid-1-v6" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster';
    w.cluster.createService = async () => {
      throw new k8s.ApiException(422, 'Invalid', JSON.stringify({ reason: 'Invalid', message }), {});
    };
    await expect(w.reconcileClaim()).rejects.toThrow();
    expect(w.events.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'ReserveFailed', message: expect.stringContaining(message) }));
    expect(w.cluster.addresses.size).toBe(0);
  });

  it('4. no double provisioning: two passes give one IPAddress, the placeholder stays as the hold', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    w.cluster.putClaim(pendingClaim());
    await w.reconcileClaim();
    w.cluster.assign(PH, 'iad-claim-uid-1-v4', '203.0.113.7');
    await w.reconcileClaim();
    await w.reconcileClaim();
    expect(w.cluster.addresses.size).toBe(1);
    expect(w.cluster.placeholders()).toHaveLength(1);
  });

  it('waits until the core has looked for an Available address (Bound condition WaitingForProvisioning)', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putClaim({ ...pendingClaim(), status: { phase: 'Pending', className: 'public' } });
    await w.reconcileClaim();
    expect(w.cluster.placeholders()).toEqual([]);
  });

  it('5. ignores a claim stamped with another provisioner', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putClaim(pendingClaim(undefined, 'other.drivers'));
    await w.reconcileClaim();
    expect(w.cluster.placeholders()).toEqual([]);
  });

  it('a claim re-targeted to another driver before it bound gives back the reservation it started here', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    w.cluster.putClaim(pendingClaim());
    await w.reconcileClaim();
    w.cluster.assign(PH, 'iad-claim-uid-1-v4', '203.0.113.1');
    w.cluster.putClaim(pendingClaim({ className: 'elsewhere', family: 'IPv4' }, 'other.drivers'));
    await w.reconcileClaim();
    expect(w.cluster.placeholders()).toEqual([]);
    expect(w.cluster.addresses.size).toBe(0);
  });

  it('a claim re-targeted to another class of ours before it bound reserves again from the new pool', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putClass({ ...publicClass(), metadata: { name: 'private', uid: 'class-uid-private' }, spec: { ...publicClass().spec, parameters: { addresses: ['198.51.100.0/29'] } } });
    await w.reconcileClass();
    await w.reconcileClass('private'); // both pools first: without one nothing is reserved (BackendNotReady)
    w.cluster.putClaim(pendingClaim());
    await w.reconcileClaim();
    w.cluster.assign(PH, 'iad-claim-uid-1-v4', '203.0.113.1');
    const retargeted = pendingClaim({ className: 'private', family: 'IPv4' });
    w.cluster.putClaim({ ...retargeted, status: { ...retargeted.status!, className: 'private' } });
    await w.reconcileClaim(); // the old pool's reservation goes
    expect(w.cluster.placeholders()).toEqual([]);
    await w.reconcileClaim(); // and the new pool is asked
    expect(w.cluster.placeholders().map((p) => p.metadata?.annotations?.['metallb.io/address-pool'])).toEqual(['iad-private']);
    expect(w.cluster.addresses.size).toBe(0);
  });

  it('6. orphan cleanup: the unassigned placeholder goes, one linked to an existing IPAddress stays', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    w.cluster.putClaim(pendingClaim({ className: 'public', family: 'Dual' }));
    await w.reconcileClaim();
    w.cluster.assign(PH, 'iad-claim-uid-1-v4', '203.0.113.7');
    await w.reconcileClaim();
    w.cluster.claims.clear(); // the claim is gone (Retain)
    await w.reconcileClaim();
    expect(w.cluster.placeholders().map((p) => p.metadata?.name)).toEqual(['iad-claim-uid-1-v4']);
  });

  it('an IPAddress recorded but not yet linked: the address pass makes no second hold, and a deleted claim keeps it', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    w.cluster.putClaim(pendingClaim());
    await w.reconcileClaim();
    w.cluster.assign(PH, 'iad-claim-uid-1-v4', '203.0.113.7');
    w.cluster.failNext = 'update Service/metallb-iad-system/iad-claim-uid-1-v4';
    await expect(w.reconcileClaim()).rejects.toThrow('simulated crash');
    await w.reconcileAddress('ip-203-0-113-7');
    expect(w.cluster.placeholders()).toHaveLength(1);
    w.cluster.claims.clear(); // the claim is gone before the handoff (Retain)
    await w.reconcileClaim();
    const placeholder = w.cluster.placeholders()[0]!;
    expect(placeholder.metadata?.annotations?.[PIN]).toBe('203.0.113.7');
    expect(placeholder.metadata?.ownerReferences?.map((o) => o.name)).toEqual(['ip-203-0-113-7']);
  });

  it('restart after each step of recording: the next pass completes it, allocating nothing twice', async () => {
    const steps: [string, number][] = [
      ['create IPAddress/', 0], // record
      ['update Service/metallb-iad-system/iad-claim-uid-1-v4', 0], // link, pin and hand the placeholder to the address
    ];
    for (const [crashBefore, skip] of steps) {
      const w = world();
      w.cluster.putClass(publicClass());
      await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
      w.cluster.putClaim(pendingClaim());
      await w.reconcileClaim();
      w.cluster.assign(PH, 'iad-claim-uid-1-v4', '203.0.113.7');
      w.cluster.failNext = crashBefore;
      w.cluster.failSkip = skip;
      await expect(w.reconcileClaim()).rejects.toThrow('simulated crash');
      await w.reconcileClaim();
      expect(w.cluster.addresses.size).toBe(1);
      expect(w.cluster.placeholders()).toHaveLength(1);
      const placeholder = w.cluster.placeholders()[0]!;
      expect(placeholder.metadata?.annotations?.[PIN]).toBe('203.0.113.7');
      expect(placeholder.metadata?.ownerReferences).toHaveLength(1);
    }
  });

  it('the claim Bound before the cache has its IPAddress: the assigned placeholder is kept and handed over, never given back', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    w.cluster.putClaim(pendingClaim());
    await w.reconcileClaim();
    w.cluster.assign(PH, 'iad-claim-uid-1-v4', '203.0.113.1');
    // The recording write reached the apiserver, its answer did not: the core bound the claim,
    // and the claim's watch event came before the address's.
    w.cluster.putAddress(boundAddress({ phase: 'Bound' }));
    w.cluster.unseenAddresses.add('ip-203-0-113-1');
    w.cluster.putClaim(boundClaim());
    await w.reconcileClaim();
    const placeholder = w.cluster.service(PH, 'iad-claim-uid-1-v4');
    expect(placeholder?.status?.loadBalancer?.ingress?.[0]?.ip).toBe('203.0.113.1');
    expect(placeholder?.metadata?.annotations?.[PIN]).toBe('203.0.113.1');
    expect(placeholder?.metadata?.ownerReferences?.map((o) => o.uid)).toEqual(['addr-uid-1']);
  });

  it('an assigned placeholder the apiserver has no IPAddress for is given back once its claim is gone', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    w.cluster.putClaim(pendingClaim());
    await w.reconcileClaim();
    w.cluster.assign(PH, 'iad-claim-uid-1-v4', '203.0.113.1');
    w.cluster.claims.clear();
    await w.reconcileClaim();
    expect(w.cluster.placeholders()).toEqual([]);
  });

  it('AlreadyExists for the same claim is adopted; for another claim it is a LedgerMismatch', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    w.cluster.putClaim(pendingClaim());
    await w.reconcileClaim();
    w.cluster.assign(PH, 'iad-claim-uid-1-v4', '203.0.113.1');
    w.cluster.putAddress({ ...boundAddress(), spec: { ...boundAddress().spec, claimRef: { namespace: 'tenant-b', name: 'other', uid: 'x' } } });
    await w.reconcileClaim();
    expect(w.events.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'LedgerMismatch', message: expect.stringContaining('tenant-b/other') }));
    expect(w.cluster.address('ip-203-0-113-1')!.spec.claimRef?.name).toBe('other'); // never fights
  });
});

describe('IPAddress controller', () => {
  it('1. an unassociated address gets a pinned, linked hold', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putAddress(boundAddress());
    await w.reconcileAddress();
    const hold = w.cluster.service(PH, 'iad-ip-203-0-113-1')!;
    expect(hold.metadata?.annotations?.[PIN]).toBe('203.0.113.1');
    expect(hold.metadata?.labels?.['metallb.drivers.local.sdn.cozystack.io/ip-address']).toBe('ip-203-0-113-1');
    expect(w.events.reasons()).toEqual(['Held']);
  });

  it('a hold MetalLB leaves without its IP, which no Service carries, is asked for again: at 30 s, then after as long again', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putAddress(boundAddress());
    const first = await w.reconcileAddress();
    const hold = w.cluster.service(PH, 'iad-ip-203-0-113-1')!;
    const created = new Date(hold.metadata!.creationTimestamp!).getTime();
    expect(first).toEqual({ requeueAfterMs: expect.closeTo(HOLD_RETRY_FIRST_MS, -3) });
    const address = w.cluster.address('ip-203-0-113-1')!;
    expect(await retryUnassignedHold(w.cluster, w.events, address, created + 29_000)).toBe(1_000);
    expect(w.cluster.log.filter((l) => l.startsWith('update Service'))).toEqual([]);
    // Due: one write on the hold, which makes MetalLB look at it again, and a Warning on the address.
    expect(await retryUnassignedHold(w.cluster, w.events, address, created + 31_000)).toBe(31_000);
    expect(w.cluster.service(PH, 'iad-ip-203-0-113-1')!.metadata?.annotations?.[HOLD_RETRIED]).toBe(new Date(created + 31_000).toISOString());
    expect(w.events.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'HoldRetried', message: expect.stringContaining('203.0.113.1') }));
    // The next ask waits as long as the hold had waited (31 s), the one after that twice as long.
    expect(await retryUnassignedHold(w.cluster, w.events, address, created + 60_000)).toBe(2_000);
    expect(await retryUnassignedHold(w.cluster, w.events, address, created + 62_000)).toBe(62_000);
    expect(w.cluster.log.filter((l) => l.startsWith('update Service'))).toHaveLength(2);
    // Once MetalLB has given it the IP there is nothing to wait for.
    w.cluster.assign(PH, 'iad-ip-203-0-113-1', '203.0.113.1');
    expect(await retryUnassignedHold(w.cluster, w.events, address, created + 600_000)).toBeUndefined();
    expect(await w.reconcileAddress()).toBeUndefined();
  });

  it('a hold without its IP while a Service carries it waits for that Service to let go: no write', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putAddress(boundAddress());
    await w.reconcileAddress();
    w.cluster.putService(tenantService('thief', {}, '203.0.113.1'));
    const address = w.cluster.address('ip-203-0-113-1')!;
    expect(await retryUnassignedHold(w.cluster, w.events, address, Date.now() + 3_600_000)).toBeUndefined();
    expect(w.cluster.log.filter((l) => l.startsWith('update Service'))).toEqual([]);
  });

  it('an admin-named address of a served class is held too, by a placeholder named after its IP', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putAddress({ ...boundAddress(), metadata: { ...boundAddress().metadata, name: 'public.203.0.113.1' } });
    await w.reconcileAddress('public.203.0.113.1');
    const [hold] = w.cluster.placeholders();
    expect(hold?.metadata?.name).toBe('iad-ip-203-0-113-1');
    expect(hold?.metadata?.labels?.['metallb.drivers.local.sdn.cozystack.io/ip-address']).toBe('public.203.0.113.1');
  });

  it('a hold the apiserver refuses (a name too long for a label): a Warning on the address, retried', async () => {
    const w = world();
    const name = `public-${'x'.repeat(60)}`;
    w.cluster.putClass(publicClass());
    w.cluster.putAddress({ ...boundAddress(), metadata: { ...boundAddress().metadata, name } });
    await expect(w.reconcileAddress(name)).rejects.toThrow();
    expect(w.events.events).toContainEqual(
      expect.objectContaining({ object: `IPAddress/${name}`, type: 'Warning', reason: 'HoldFailed', message: expect.stringContaining('203.0.113.1') }),
    );
  });

  it('2. an address associated with a Service that names its claim and is pinned to it drops its hold', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putClaim(boundClaim());
    w.cluster.putAddress(boundAddress());
    await w.reconcileAddress();
    w.cluster.putAddress(boundAddress({ phase: 'Bound', associatedTo: { kind: 'Service', namespace: 'tenant-a', name: 'web-lb' } }));
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }));
    await w.reconcileAddress();
    expect(w.cluster.placeholders()).toHaveLength(1); // not pinned yet: the hold stays until the Service asks for the IP
    w.cluster.putService({ ...tenantService('web-lb', { [CLAIM]: 'web', [PIN]: '203.0.113.1', [MARKER]: 'true' }), metadata: { name: 'web-lb', namespace: 'tenant-a', labels: { [CARRIER]: 'true' }, annotations: { [CLAIM]: 'web', [PIN]: '203.0.113.1', [MARKER]: 'true' } } });
    await w.reconcileAddress();
    expect(w.cluster.placeholders()).toEqual([]);
  });

  it('an association that no longer holds: held again first, and cleared only once the Service has let the IP go', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putClaim(boundClaim());
    w.cluster.putAddress(boundAddress({ phase: 'Bound', associatedTo: { kind: 'Service', namespace: 'tenant-a', name: 'web-lb' } }));
    // The tenant switched the Service to another claim; MetalLB has not taken the IP back yet.
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'other' }, '203.0.113.1'));
    await w.reconcileAddress();
    expect(w.cluster.placeholders().map((p) => p.metadata?.annotations?.[PIN])).toEqual(['203.0.113.1']);
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo?.name).toBe('web-lb');
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'other' }));
    await w.reconcileAddress();
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo).toBeUndefined();
    expect(w.cluster.placeholders()).toHaveLength(1);
  });

  it('3. a stale association is cleared and the address re-held', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putAddress(boundAddress({ phase: 'Bound', associatedTo: { kind: 'Service', namespace: 'tenant-a', name: 'deleted-vm' } }));
    await w.reconcileAddress();
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo).toBeUndefined();
    expect(w.cluster.placeholders()).toHaveLength(1);
  });

  it('4. an address of another class is ignored', async () => {
    const w = world();
    w.cluster.putClass(publicClass({ provisioner: 'other' }));
    w.cluster.putAddress(boundAddress());
    await w.reconcileAddress();
    expect(w.cluster.placeholders()).toEqual([]);
  });

  it('5. teardown: holds deleted, the Service pass unpins the holder, then the finalizer is released', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    // As an informer lists it: items of a list carry no kind or apiVersion.
    const { kind: _kind, apiVersion: _apiVersion, ...listed } = tenantService('web-lb', { [PIN]: '203.0.113.1', [MARKER]: 'true', [CLAIM]: 'web' });
    w.cluster.putService(listed);
    w.cluster.putAddress(boundAddress());
    await w.reconcileAddress(); // a hold exists
    w.cluster.putAddress(boundAddress({ phase: 'Bound', associatedTo: { kind: 'Service', namespace: 'tenant-a', name: 'web-lb' } }));
    w.cluster.deleteAddressRequest('ip-203-0-113-1');
    expect(await w.reconcileAddress()).toEqual({ requeueAfterMs: expect.any(Number) });
    expect(w.cluster.address('ip-203-0-113-1')!.metadata.finalizers).toHaveLength(1); // the Service still pins its IP
    await w.reconcileService('web-lb');
    await w.reconcileAddress();
    expect(w.cluster.address('ip-203-0-113-1')).toBeUndefined();
    expect(w.cluster.placeholders()).toEqual([]);
    expect(w.cluster.service('tenant-a', 'web-lb')!.metadata?.annotations).toEqual({ [CLAIM]: 'web' });
    expect(w.events.events).toContainEqual(expect.objectContaining({ object: 'Service/web-lb', reason: 'Disassociated' }));
  });

  it('6. Conflict clears when only the driver’s own hold carries the IP (no class needed)', async () => {
    const w = world();
    w.cluster.putAddress(boundAddress({ phase: 'Conflict' }));
    w.cluster.putService({ ...tenantService('iad-ip-203-0-113-1', {}, '203.0.113.1'), metadata: { name: 'iad-ip-203-0-113-1', namespace: PH, labels: { 'metallb.drivers.local.sdn.cozystack.io/placeholder': 'true' } } });
    await w.reconcileAddress();
    expect(w.cluster.address('ip-203-0-113-1')!.status?.phase).toBe('Bound');
    expect(w.events.reasons()).toEqual(['ConflictResolved']);
  });

  it('7. Conflict persists while a thief carries the IP', async () => {
    const w = world();
    w.cluster.putAddress(boundAddress({ phase: 'Conflict' }));
    w.cluster.putService(tenantService('thief', {}, '203.0.113.1'));
    await w.reconcileAddress();
    expect(w.cluster.address('ip-203-0-113-1')!.status?.phase).toBe('Conflict');
  });

  it('Lost: the IP leaves the class and its pool; it comes back Bound when they hold it again', async () => {
    const w = world();
    w.cluster.putClass(publicClass({ parameters: { addresses: ['198.51.100.0/28'] } }));
    await w.reconcileClass();
    w.cluster.putAddress(boundAddress());
    await w.reconcileAddress();
    expect(w.cluster.address('ip-203-0-113-1')!.status?.phase).toBe('Lost');
    expect(w.events.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'Lost' }));
    expect(w.cluster.placeholders()).toEqual([]);
    w.cluster.putClass(publicClass());
    await w.reconcileClass();
    await w.reconcileAddress();
    expect(w.cluster.address('ip-203-0-113-1')!.status?.phase).toBe('Bound');
    await w.reconcileAddress();
    expect(w.cluster.placeholders()).toHaveLength(1); // held again
  });

  it('a pool the driver has not written yet is no loss while the class still covers the IP', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putAddress(boundAddress());
    await w.reconcileAddress();
    expect(w.cluster.address('ip-203-0-113-1')!.status?.phase).toBe('Bound');
  });
});

describe('Service controller', () => {
  function handoffWorld() {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putClaim(boundClaim());
    w.cluster.putAddress(boundAddress());
    return w;
  }

  it('1. hands off from the hold to the Service: associatedTo first, then the hold goes, then the pin', async () => {
    const w = handoffWorld();
    await w.reconcileAddress();
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }));
    w.cluster.log.length = 0;
    await w.reconcileService('web-lb');
    expect(w.cluster.service('tenant-a', 'web-lb')!.metadata?.annotations).toMatchObject({ [PIN]: '203.0.113.1', [MARKER]: 'true' });
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo).toEqual({ kind: 'Service', namespace: 'tenant-a', name: 'web-lb' });
    expect(w.cluster.placeholders()).toEqual([]);
    // The handoff order: the Service asks for the IP before the hold lets it go, so MetalLB hands it
    // straight over and no one else can take it in between.
    expect(w.cluster.log.map((l) => l.split(' ')[0] + ' ' + l.split(' ')[1])).toEqual([
      'status IPAddress/ip-203-0-113-1',
      'update Service/tenant-a/web-lb',
      `delete Service/${PH}/iad-ip-203-0-113-1`,
      'status Service/tenant-a/web-lb', // the verdict, Attached, where the Service's owner looks
    ]);
  });

  it('2. a second Service naming the same claim is rejected while the first lives', async () => {
    const w = handoffWorld();
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }));
    await w.reconcileService('web-lb');
    w.cluster.putService(tenantService('thief', { [CLAIM]: 'web' }));
    await w.reconcileService('thief');
    expect(w.cluster.service('tenant-a', 'thief')!.metadata?.annotations?.[PIN]).toBeUndefined();
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo?.name).toBe('web-lb');
    expect(w.events.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'AssociationRejected' }));
  });

  it('3. a dead holder is taken over', async () => {
    const w = handoffWorld();
    w.cluster.putAddress(boundAddress({ phase: 'Bound', associatedTo: { kind: 'Service', namespace: 'tenant-a', name: 'old-vm' } }));
    w.cluster.putService(tenantService('new-vm', { [CLAIM]: 'web' }));
    await w.reconcileService('new-vm');
    expect(w.cluster.service('tenant-a', 'new-vm')!.metadata?.annotations?.[PIN]).toBe('203.0.113.1');
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo?.name).toBe('new-vm');
  });

  it('4. removing the annotation withdraws the pin and the association, and keeps the binding', async () => {
    const w = handoffWorld();
    w.cluster.putAddress(boundAddress({ phase: 'Bound', associatedTo: { kind: 'Service', namespace: 'tenant-a', name: 'web-lb' } }));
    w.cluster.putService(tenantService('web-lb', { [PIN]: '203.0.113.1', [MARKER]: 'true' }));
    await w.reconcileService('web-lb');
    expect(w.cluster.service('tenant-a', 'web-lb')!.metadata?.annotations).toEqual({});
    // Held first: the hold waits for the IP the Service is giving up.
    expect(w.cluster.placeholders().map((p) => p.metadata?.annotations?.[PIN])).toEqual(['203.0.113.1']);
    await w.reconcileAddress();
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo).toBeUndefined();
    expect(w.cluster.address('ip-203-0-113-1')!.spec.claimRef?.name).toBe('web');
  });

  it('a Service that is no LoadBalancer gets no address: a Warning, and the hold stays', async () => {
    const w = handoffWorld();
    await w.reconcileAddress();
    const service = tenantService('web-internal', { [CLAIM]: 'web' });
    w.cluster.putService({ ...service, spec: { ...service.spec, type: 'ClusterIP' } });
    await w.reconcileService('web-internal');
    expect(w.cluster.service('tenant-a', 'web-internal')!.metadata?.annotations).toEqual({ [CLAIM]: 'web' });
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo).toBeUndefined();
    expect(w.cluster.placeholders()).toHaveLength(1);
    expect(w.events.events).toContainEqual(expect.objectContaining({ object: 'Service/web-internal', type: 'Warning', reason: 'NotLoadBalancer' }));
  });

  it('a pinned Service turned ClusterIP gives the address back to its hold', async () => {
    const w = handoffWorld();
    w.cluster.putAddress(boundAddress({ phase: 'Bound', associatedTo: { kind: 'Service', namespace: 'tenant-a', name: 'web-lb' } }));
    const service = tenantService('web-lb', { [CLAIM]: 'web', [PIN]: '203.0.113.1', [MARKER]: 'true' });
    w.cluster.putService({ ...service, spec: { ...service.spec, type: 'ClusterIP' } });
    await w.reconcileService('web-lb');
    expect(w.cluster.service('tenant-a', 'web-lb')!.metadata?.annotations).toEqual({ [CLAIM]: 'web' });
    expect(w.cluster.placeholders().map((p) => p.metadata?.annotations?.[PIN])).toEqual(['203.0.113.1']);
    await w.reconcileAddress();
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo).toBeUndefined();
  });

  it('5. a hand-written pin without the marker is never touched', async () => {
    const w = handoffWorld();
    w.cluster.putService(tenantService('gitops', { [PIN]: '198.51.100.9' }));
    await w.reconcileService('gitops');
    expect(w.cluster.service('tenant-a', 'gitops')!.metadata?.annotations).toEqual({ [PIN]: '198.51.100.9' });
  });

  it('6. a Service carrying a bound IP without authorization puts the address in Conflict, with Events on both', async () => {
    const w = handoffWorld();
    w.cluster.putService(tenantService('thief', {}, '203.0.113.1'));
    await w.reconcileService('thief');
    expect(w.cluster.address('ip-203-0-113-1')!.status?.phase).toBe('Conflict');
    expect(w.events.events.map((e) => `${e.object} ${e.reason}`)).toEqual(['Service/thief AddressConflict', 'IPAddress/ip-203-0-113-1 Conflict']);
  });

  it('7. the driver’s own placeholder is not a conflict', async () => {
    const w = handoffWorld();
    await w.reconcileAddress();
    w.cluster.assign(PH, 'iad-ip-203-0-113-1', '203.0.113.1');
    await w.reconcileService('iad-ip-203-0-113-1', PH);
    expect(w.cluster.address('ip-203-0-113-1')!.status?.phase).toBe('Bound');
  });

  it('8. an untracked IP is left alone', async () => {
    const w = handoffWorld();
    w.cluster.putService(tenantService('plain', {}, '198.51.100.7'));
    await w.reconcileService('plain');
    expect(w.cluster.addresses.size).toBe(1);
    expect(w.events.events).toEqual([]);
  });

  it('an annotation naming a missing claim: a Warning, nothing pinned', async () => {
    const w = handoffWorld();
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'nope' }));
    await w.reconcileService('web-lb');
    expect(w.events.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'ClaimNotFound', message: 'IPAddressClaim tenant-a/nope not found' })]);
    expect(w.cluster.service('tenant-a', 'web-lb')!.metadata?.annotations?.[PIN]).toBeUndefined();
  });

  it('a claim of another namespace cannot be named: it is looked up in the Service’s own', async () => {
    const w = handoffWorld();
    w.cluster.putService({ ...tenantService('web-lb', { [CLAIM]: 'web' }), metadata: { name: 'web-lb', namespace: 'tenant-b', annotations: { [CLAIM]: 'web' } } });
    await w.reconcileService('web-lb', 'tenant-b');
    expect(w.events.reasons()).toEqual(['ClaimNotFound']);
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo).toBeUndefined();
  });

  it('a claim not yet Bound: a Normal event, nothing pinned', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putClaim(pendingClaim());
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }));
    await w.reconcileService('web-lb');
    expect(w.events.events).toEqual([
      expect.objectContaining({ object: 'Service/web-lb', type: 'Normal', reason: 'ClaimNotBound' }),
      expect.objectContaining({ object: 'IPAddressClaim/web', type: 'Normal', reason: 'ClaimNotBound', message: expect.stringContaining('Service tenant-a/web-lb') }),
    ]);
  });

  it('a Dual claim pins v4 first, then v6', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putClaim({ ...boundClaim(), spec: { className: 'public', family: 'Dual' }, status: { phase: 'Bound', className: 'public', addresses: [{ name: 'ip-2001-db8--1', address: '2001:db8::1' }, { name: 'ip-203-0-113-1', address: '203.0.113.1' }] } });
    w.cluster.putAddress(boundAddress());
    w.cluster.putAddress({ ...boundAddress(), metadata: { name: 'ip-2001-db8--1', uid: 'u6' }, spec: { ...boundAddress().spec, address: '2001:db8::1' } });
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }, undefined, ['IPv4', 'IPv6']));
    await w.reconcileService('web-lb');
    expect(w.cluster.service('tenant-a', 'web-lb')!.metadata?.annotations?.[PIN]).toBe('203.0.113.1,2001:db8::1');
  });

  it('restart mid-handoff (after the association, before the pin): the next pass finishes it', async () => {
    const w = handoffWorld();
    await w.reconcileAddress();
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }));
    w.cluster.failNext = 'update Service/tenant-a/web-lb';
    await expect(w.reconcileService('web-lb')).rejects.toThrow('simulated crash');
    // The address pass in between keeps the hold (the Service does not ask for the IP yet) and makes no second one.
    await w.reconcileAddress();
    expect(w.cluster.placeholders()).toHaveLength(1);
    await w.reconcileService('web-lb');
    expect(w.cluster.service('tenant-a', 'web-lb')!.metadata?.annotations?.[PIN]).toBe('203.0.113.1');
    expect(w.cluster.placeholders()).toEqual([]);
  });
});


describe('update conflicts (a stale resourceVersion is refused, as by the apiserver)', () => {
  const conflict = (error: unknown) => (error as { code?: number }).code;

  it('the placeholder changed under the recording pass: 409, and the retried pass records the address once', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    w.cluster.putClaim(pendingClaim());
    await w.reconcileClaim();
    w.cluster.assign(PH, 'iad-claim-uid-1-v4', '203.0.113.7');
    // MetalLB writes the placeholder again between the driver's read and its pin.
    w.cluster.concurrentWriteBefore(`update Service/${PH}/iad-claim-uid-1-v4`, (c) => c.touch(c.services.get(`${PH}/iad-claim-uid-1-v4`)!));
    const first = await w.reconcileClaim().then(() => undefined, (e: unknown) => e);
    expect(conflict(first)).toBe(409);
    await w.reconcileClaim();
    expect(w.cluster.log.filter((l) => l.startsWith('create IPAddress/'))).toEqual(['create IPAddress/ip-203-0-113-7']);
    const placeholder = w.cluster.service(PH, 'iad-claim-uid-1-v4')!;
    expect(placeholder.metadata?.annotations?.[PIN]).toBe('203.0.113.7');
    expect(placeholder.metadata?.labels?.['metallb.drivers.local.sdn.cozystack.io/ip-address']).toBe('ip-203-0-113-7');
  });

  it('the tenant edits its Service during the pin: 409, and the retried pin keeps the tenant\'s edit', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putClaim(boundClaim());
    w.cluster.putAddress(boundAddress());
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }));
    w.cluster.concurrentWriteBefore('update Service/tenant-a/web-lb', (c) =>
      c.touch(c.services.get('tenant-a/web-lb')!, (s) => (s.metadata!.labels = { team: 'blue' })),
    );
    const first = await w.reconcileService('web-lb').then(() => undefined, (e: unknown) => e);
    expect(conflict(first)).toBe(409);
    await w.reconcileService('web-lb');
    const service = w.cluster.service('tenant-a', 'web-lb')!;
    expect(service.metadata?.annotations).toMatchObject({ [PIN]: '203.0.113.1', [MARKER]: 'true' });
    expect(service.metadata?.labels).toEqual({ team: 'blue', [CARRIER]: 'true' });
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo).toEqual({ kind: 'Service', namespace: 'tenant-a', name: 'web-lb' });
  });

  it('the core writes the address status during the driver\'s status write: 409, and the retry keeps the core\'s phase', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putClaim(boundClaim());
    w.cluster.putAddress(boundAddress({ phase: 'Available' }));
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }));
    w.cluster.concurrentWriteBefore('status IPAddress/ip-203-0-113-1', (c) =>
      c.touch(c.addresses.get('ip-203-0-113-1')!, (a) => (a.status = { ...a.status, phase: 'Bound' })),
    );
    const first = await w.reconcileService('web-lb').then(() => undefined, (e: unknown) => e);
    expect(conflict(first)).toBe(409);
    await w.reconcileService('web-lb');
    const address = w.cluster.address('ip-203-0-113-1')!;
    expect(address.status?.phase).toBe('Bound');
    expect(address.status?.associatedTo).toEqual({ kind: 'Service', namespace: 'tenant-a', name: 'web-lb' });
  });

  it('the in-memory cluster refuses an update without a resourceVersion, and one with a stale one', async () => {
    const w = world();
    w.cluster.putAddress(boundAddress());
    const current = w.cluster.address('ip-203-0-113-1')!;
    await expect(w.cluster.updateAddress({ ...current, metadata: { ...current.metadata, resourceVersion: undefined } })).rejects.toMatchObject({ code: 422 });
    await w.cluster.updateAddress(current);
    await expect(w.cluster.updateAddress(current)).rejects.toMatchObject({ code: 409 });
  });
});

describe('class controller and pools that are not the driver’s', () => {
  const adminPool = (addresses: string[], name = 'admin-pool'): MetallbObject => ({
    apiVersion: 'metallb.io/v1beta1',
    kind: 'IPAddressPool',
    metadata: { name, namespace: 'metallb-system' },
    spec: { addresses },
  });
  const condition = (w: ReturnType<typeof world>, type: string) => w.cluster.ipClass('public')!.status?.conditions?.find((c) => c.type === type);

  it('a class overlapping an admin’s pool: no pool written, a Warning and a condition naming that pool; served once the pool shrinks', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.pools.set('IPAddressPool/admin-pool', adminPool(['203.0.113.4-203.0.113.20']));
    await w.reconcileClass();
    expect(w.cluster.pool('public')).toBeUndefined();
    expect(w.events.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'OverlapsForeignPool', message: expect.stringContaining('metallb-system/admin-pool') }));
    expect(condition(w, 'BackendReady')).toMatchObject({ status: 'False', reason: 'OverlapsForeignPool', message: expect.stringContaining('admin-pool') });
    w.cluster.pools.set('IPAddressPool/admin-pool', adminPool(['203.0.113.16/28']));
    await w.reconcileClass();
    expect(w.cluster.pool('public')!.spec?.addresses).toEqual(['203.0.113.0/29', '2001:db8::/126']);
    expect(condition(w, 'BackendReady')).toMatchObject({ status: 'True', reason: 'PoolWritten' });
  });

  it('an overlap that appears later is reported, and neither pool is rewritten or deleted', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass();
    const ours = w.cluster.pool('public');
    w.cluster.pools.set('IPAddressPool/admin-pool', adminPool(['2001:db8::/64']));
    w.cluster.log.length = 0;
    await w.reconcileClass();
    expect(w.cluster.log.filter((l) => l.startsWith('apply'))).toEqual([]);
    expect(w.cluster.pool('public')).toEqual(ours);
    expect(condition(w, 'BackendReady')).toMatchObject({ status: 'False', reason: 'OverlapsForeignPool' });
  });

  it('a pool of the driver’s name that no class owns is left alone', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.pools.set('IPAddressPool/iad-public', adminPool(['198.51.100.0/24'], 'iad-public'));
    await w.reconcileClass();
    expect(w.cluster.pool('public')!.spec?.addresses).toEqual(['198.51.100.0/24']);
    expect(condition(w, 'BackendReady')).toMatchObject({ status: 'False', reason: 'PoolNotOwned' });
  });

  it('MetalLB refusing its configuration is said on every served class', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.states.push({
      apiVersion: 'metallb.io/v1beta1',
      kind: 'ConfigurationState',
      metadata: { name: 'controller', namespace: 'metallb-system' },
      status: { conditions: [{ type: 'ConfigReconcilerValid', status: 'False', reason: 'ConfigurationError', message: 'overlapping CIDRs' }] },
    } as MetallbObject);
    await w.reconcileClass();
    expect(condition(w, 'BackendReady')).toMatchObject({ status: 'True' });
    expect(condition(w, 'MetalLBConfigured')).toMatchObject({ status: 'False', reason: 'ConfigurationError', message: expect.stringContaining('overlapping CIDRs') });
  });
});

describe('a claim waiting on a full class', () => {
  it('says so (Provisioned=False, ClassExhausted, and a Warning), and takes it off once it no longer waits for that', async () => {
    const w = world();
    w.cluster.putClass({ ...publicClass(), spec: { ...publicClass().spec, parameters: { addresses: ['203.0.113.1/32'] } } });
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    // The one address of the class belongs to another claim.
    w.cluster.putAddress({ ...boundAddress(), spec: { ...boundAddress().spec, claimRef: { namespace: 'tenant-b', name: 'first', uid: 'u-first' } } });
    w.cluster.putClaim(pendingClaim());
    await w.reconcileClaim(); // asks MetalLB, which has nothing to give
    await w.reconcileClaim();
    const condition = () => w.cluster.claim('tenant-a', 'web')!.status?.conditions?.find((c) => c.type === 'Provisioned');
    expect(condition()).toMatchObject({ status: 'False', reason: 'ClassExhausted', message: expect.stringContaining('no free IPv4 address') });
    expect(w.events.events).toContainEqual(expect.objectContaining({ object: 'IPAddressClaim/web', type: 'Warning', reason: 'ClassExhausted' }));
    w.cluster.log.length = 0;
    await w.reconcileClaim();
    expect(w.cluster.log.filter((l) => l.startsWith('status IPAddressClaim'))).toEqual([]); // unchanged: no write
    w.cluster.addresses.clear(); // the address went: room again
    await w.reconcileClaim();
    expect(condition()).toBeUndefined();
  });
});
