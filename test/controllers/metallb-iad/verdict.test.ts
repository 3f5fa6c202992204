/**
 * The association rule's newer parts (docs/driver.md, "Association" and "The
 * verdict"): loadBalancerClass, a Dual claim on a single-stack Service, the
 * oldest Service wins whatever the order, the verdict on both sides, a copying
 * deputy's MetalLB keys, and a replace that dropped the driver's keys.
 */
import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { IPAddress, IPAddressClaim } from '../../../api/v1alpha1/index.js';
import { associationVerdict } from '../../../controllers/metallb-iad/association.js';
import { boundAddress, boundClaim, PH, publicClass, tenantService, world } from './fixtures.js';

const CLAIM = 'local.sdn.cozystack.io/ip-address-claim';
const PIN = 'metallb.io/loadBalancerIPs';
const MARKER = 'metallb.drivers.local.sdn.cozystack.io/pinned';
const CARRIER = 'metallb.drivers.local.sdn.cozystack.io/carrier';
const ATTACHED = 'local.sdn.cozystack.io/Attached';
const LB_CLASS = 'example.com/public';

type World = ReturnType<typeof world>;

const reason = (w: World, service: V1Service) => {
  const verdict = associationVerdict(w.cluster, service);
  return verdict.ok ? 'ok' : (verdict.refusal?.reason ?? 'silent');
};
const serviceCondition = (w: World, name: string) => w.cluster.service('tenant-a', name)?.status?.conditions?.find((c) => c.type === ATTACHED);
const claimStatus = (w: World, name = 'web') => w.cluster.claim('tenant-a', name)!.status!;
const claimCondition = (w: World, name = 'web') => claimStatus(w, name).conditions?.find((c) => c.type === 'Attached');
const pinOf = (w: World, name: string) => w.cluster.service('tenant-a', name)?.metadata?.annotations?.[PIN];

function boundWorld(classExtra: Parameters<typeof publicClass>[0] = {}): World {
  const w = world();
  w.cluster.putClass(publicClass(classExtra));
  w.cluster.putClaim(boundClaim());
  w.cluster.putAddress(boundAddress());
  return w;
}

/** A Dual claim bound to 203.0.113.1 and 2001:db8::1, both held. */
async function dualWorld(): Promise<World> {
  const w = world();
  w.cluster.putClass(publicClass());
  const claim: IPAddressClaim = {
    ...boundClaim(),
    spec: { className: 'public', family: 'Dual' },
    status: { phase: 'Bound', className: 'public', addresses: [{ name: 'ip-2001-db8--1', address: '2001:db8::1' }, { name: 'ip-203-0-113-1', address: '203.0.113.1' }] },
  };
  w.cluster.putClaim(claim);
  w.cluster.putAddress(boundAddress());
  const v6: IPAddress = { ...boundAddress(), metadata: { ...boundAddress().metadata, name: 'ip-2001-db8--1', uid: 'addr-uid-6' }, spec: { ...boundAddress().spec, address: '2001:db8::1' } };
  w.cluster.putAddress(v6);
  await w.reconcileAddress('ip-203-0-113-1');
  await w.reconcileAddress('ip-2001-db8--1');
  return w;
}

describe('loadBalancerClass', () => {
  it('a class that declares one gets it on its holds and allocation placeholders (the MetalLB of that class serves them)', async () => {
    const w = boundWorld({ loadBalancerClass: LB_CLASS });
    await w.reconcileAddress();
    expect(w.cluster.placeholders().map((p) => p.spec?.loadBalancerClass)).toEqual([LB_CLASS]);
    w.cluster.putClaim({ ...boundClaim(), metadata: { ...boundClaim().metadata, name: 'api', uid: 'claim-uid-2' }, status: { phase: 'Pending', className: 'public' } });
    w.cluster.putService({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'iad-pool', namespace: 'metallb-system' } }); // unrelated
    await w.reconcileClass();
    await w.reconcileClaim('api');
    expect(w.cluster.placeholders().every((p) => p.spec?.loadBalancerClass === LB_CLASS)).toBe(true);
  });

  it('a class without one leaves its placeholders without', async () => {
    const w = boundWorld();
    await w.reconcileAddress();
    expect(w.cluster.placeholders().map((p) => p.spec?.loadBalancerClass)).toEqual([undefined]);
  });

  it.each([
    ['the class declares one, the Service has none', { loadBalancerClass: LB_CLASS }, undefined, 'LoadBalancerClassMismatch'],
    ['the class declares one, the Service has another', { loadBalancerClass: LB_CLASS }, 'example.com/other', 'LoadBalancerClassMismatch'],
    ['the class declares none, the Service has one', {}, LB_CLASS, 'LoadBalancerClassMismatch'],
    ['both the same', { loadBalancerClass: LB_CLASS }, LB_CLASS, 'ok'],
    ['neither', {}, undefined, 'ok'],
  ] as const)('%s: %s', (_what, classExtra, serviceClass, expected) => {
    const w = boundWorld(classExtra);
    const service = tenantService('web-lb', { [CLAIM]: 'web' });
    service.spec!.loadBalancerClass = serviceClass;
    expect(reason(w, service)).toBe(expected);
  });

  it('a mismatch names both classes, pins nothing, and is said on the Service and the claim', async () => {
    const w = boundWorld({ loadBalancerClass: LB_CLASS });
    await w.reconcileAddress();
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }));
    await w.reconcileService('web-lb');
    await w.reconcileAttachment();
    expect(pinOf(w, 'web-lb')).toBeUndefined();
    expect(serviceCondition(w, 'web-lb')).toMatchObject({ status: 'False', reason: 'LoadBalancerClassMismatch' });
    expect(serviceCondition(w, 'web-lb')!.message).toContain(`loadBalancerClass ${LB_CLASS}`);
    expect(serviceCondition(w, 'web-lb')!.message).toContain('loadBalancerClass (none)');
    expect(claimCondition(w)).toMatchObject({ status: 'False', reason: 'LoadBalancerClassMismatch' });
    expect(claimStatus(w).associatedTo).toBeUndefined();
    expect(w.cluster.placeholders()).toHaveLength(1); // still held
  });
});

describe('a Dual claim on a single-stack Service', () => {
  it('carries the address of the Service’s family; the other stays held and silent', async () => {
    const w = await dualWorld();
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }, undefined, ['IPv4']));
    await w.reconcileService('web-lb');
    expect(pinOf(w, 'web-lb')).toBe('203.0.113.1');
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo?.name).toBe('web-lb');
    expect(w.cluster.address('ip-2001-db8--1')!.status?.associatedTo).toBeUndefined();
    expect(w.cluster.placeholders().map((p) => p.metadata?.name)).toEqual(['iad-ip-2001-db8--1']);
    expect(w.events.events.filter((e) => e.type === 'Warning')).toEqual([]);
    expect(serviceCondition(w, 'web-lb')).toMatchObject({ status: 'True', reason: 'Attached' });
    expect(serviceCondition(w, 'web-lb')!.message).toContain('2001:db8::1 (IPv6) stays held');
    // The address pass leaves the held one held.
    w.cluster.log.length = 0;
    await w.reconcileAddress('ip-2001-db8--1');
    expect(w.cluster.log).toEqual([]);
  });

  it('an IPv6-only Service carries the IPv6 address', async () => {
    const w = await dualWorld();
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }, undefined, ['IPv6']));
    await w.reconcileService('web-lb');
    expect(pinOf(w, 'web-lb')).toBe('2001:db8::1');
  });

  it('once the Service is dual-stack it carries both, the held one handed over from its hold', async () => {
    const w = await dualWorld();
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }, undefined, ['IPv4']));
    await w.reconcileService('web-lb');
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web', [PIN]: '203.0.113.1', [MARKER]: 'true' }, '203.0.113.1', ['IPv4', 'IPv6']));
    const labelled = w.cluster.service('tenant-a', 'web-lb')!;
    labelled.metadata!.labels = { [CARRIER]: 'true' };
    w.cluster.putService(labelled);
    await w.reconcileService('web-lb');
    expect(pinOf(w, 'web-lb')).toBe('203.0.113.1,2001:db8::1');
    expect(w.cluster.address('ip-2001-db8--1')!.status?.associatedTo?.name).toBe('web-lb');
    expect(w.cluster.placeholders()).toEqual([]);
    expect(serviceCondition(w, 'web-lb')!.message).not.toContain('stays held');
  });

  it('a single-family claim on a Service without that family is refused as before', () => {
    const w = boundWorld();
    expect(reason(w, tenantService('web-lb', { [CLAIM]: 'web' }, undefined, ['IPv6']))).toBe('WrongFamily');
    expect(reason(w, tenantService('web-lb', { [CLAIM]: 'web' }, undefined, ['IPv4', 'IPv6']))).toBe('WrongFamily');
  });
});

describe('one deterministic winner among the Services naming a claim', () => {
  const dated = (name: string, at: string, annotations: Record<string, string> = { [CLAIM]: 'web' }) => {
    const s = tenantService(name, annotations);
    s.metadata!.creationTimestamp = new Date(at);
    return s;
  };

  it.each([
    ['older first', ['old', 'new']],
    ['newer first', ['new', 'old']],
  ])('the oldest wins whatever the order of events (%s), and after a restart', async (_what, order) => {
    const w = boundWorld();
    await w.reconcileAddress();
    w.cluster.putService(dated('old', '2026-01-01T00:00:00Z'));
    w.cluster.putService(dated('new', '2026-01-02T00:00:00Z'));
    for (const name of order) {
      await w.reconcileService(name);
    }
    // As the controllers run: each event wakes the other Service naming the claim, the address pass runs too.
    for (let round = 0; round < 3; round++) {
      await w.reconcileService('new');
      await w.reconcileAddress();
      await w.reconcileService('old');
    }
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo?.name).toBe('old');
    expect(pinOf(w, 'old')).toBe('203.0.113.1');
    expect(pinOf(w, 'new')).toBeUndefined();
    expect(serviceCondition(w, 'new')).toMatchObject({ status: 'False', reason: 'AssociationRejected' });
    expect(serviceCondition(w, 'new')!.message).toContain('serves Service old');
    // A restart (fresh reconcilers over the same cluster) changes nothing.
    const again = world();
    Object.assign(again, { cluster: w.cluster });
    w.cluster.log.length = 0;
    await w.reconcileService('new');
    await w.reconcileService('old');
    expect(w.cluster.log).toEqual([]);
  });

  it('an older Service that names the claim later takes it over through the hold, never carried by both', async () => {
    const w = boundWorld();
    await w.reconcileAddress();
    w.cluster.putService(dated('old', '2026-01-01T00:00:00Z', {}));
    w.cluster.putService(dated('new', '2026-01-02T00:00:00Z'));
    await w.reconcileService('new');
    w.cluster.assign('tenant-a', 'new', '203.0.113.1');
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo?.name).toBe('new');
    // The older Service is annotated: it waits (HandingOver) while the newer still carries the IP.
    const old = w.cluster.service('tenant-a', 'old')!;
    old.metadata!.annotations = { [CLAIM]: 'web' };
    w.cluster.putService(old);
    await w.reconcileService('old');
    expect(pinOf(w, 'old')).toBeUndefined();
    expect(serviceCondition(w, 'old')).toMatchObject({ status: 'False', reason: 'HandingOver' });
    // The newer lets go: held first, then unpinned.
    w.cluster.log.length = 0;
    await w.reconcileService('new');
    expect(w.cluster.log.map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual([
      `create Service/${PH}/iad-ip-203-0-113-1`,
      'update Service/tenant-a/new',
      'status Service/tenant-a/new',
    ]);
    // MetalLB takes the IP from the newer one (to the hold); the address pass clears the association; the older gets it.
    const unassigned = w.cluster.service('tenant-a', 'new')!;
    unassigned.status = { ...unassigned.status, loadBalancer: {} };
    w.cluster.putService(unassigned);
    await w.reconcileAddress();
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo).toBeUndefined();
    await w.reconcileService('old');
    expect(pinOf(w, 'old')).toBe('203.0.113.1');
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo?.name).toBe('old');
    expect(w.cluster.placeholders()).toEqual([]);
  });

  it('the claim says which Service it serves and why each other gets nothing', async () => {
    const w = boundWorld();
    await w.reconcileAddress();
    w.cluster.putService(dated('web-lb', '2026-01-01T00:00:00Z'));
    w.cluster.putService(dated('copy', '2026-01-02T00:00:00Z'));
    const clusterIp = dated('internal', '2026-01-03T00:00:00Z');
    clusterIp.spec!.type = 'ClusterIP';
    w.cluster.putService(clusterIp);
    await w.reconcileService('web-lb');
    await w.reconcileAttachment();
    expect(claimStatus(w).associatedTo).toEqual({ kind: 'Service', namespace: 'tenant-a', name: 'web-lb' });
    expect(claimCondition(w)).toMatchObject({ status: 'True', reason: 'Attached' });
    expect(claimCondition(w)!.message).toBe('Service web-lb carries 203.0.113.1; Service copy gets nothing (AssociationRejected); Service internal gets nothing (NotLoadBalancer)');
    // Said once: another pass writes nothing.
    w.cluster.log.length = 0;
    await w.reconcileAttachment();
    expect(w.cluster.log).toEqual([]);
    // The winner goes: the next oldest the rule admits carries it (the address's Service is gone, nothing to wait for).
    w.cluster.services.delete('tenant-a/web-lb');
    await w.reconcileAttachment();
    expect(claimStatus(w).associatedTo).toEqual({ kind: 'Service', namespace: 'tenant-a', name: 'copy' });
    expect(claimCondition(w)!.message).toBe('Service copy carries 203.0.113.1; Service internal gets nothing (NotLoadBalancer)');
  });

  it('a claim no Service names carries no Attached condition (a reserved claim is quiet)', async () => {
    const w = boundWorld();
    await w.reconcileAttachment();
    expect(claimCondition(w)).toBeUndefined();
    expect(w.cluster.log).toEqual([]);
  });
});

describe('MetalLB’s keys on a Service naming a claim are the driver’s', () => {
  it('copied keys (a tenant cluster’s cloud-controller-manager) give way to the claim’s pin', async () => {
    const w = boundWorld();
    await w.reconcileAddress();
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web', [PIN]: '203.0.113.5', 'metallb.universe.tf/address-pool': 'inner', 'metallb.io/address-pool': 'inner' }));
    await w.reconcileService('web-lb');
    const annotations = w.cluster.service('tenant-a', 'web-lb')!.metadata!.annotations!;
    expect(annotations).toEqual({ [CLAIM]: 'web', [PIN]: '203.0.113.1', [MARKER]: 'true' });
  });

  it('while the claim gives it nothing, no copied key chooses its address', async () => {
    const w = boundWorld();
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'missing', [PIN]: '203.0.113.5', 'metallb.io/address-pool': 'inner' }));
    await w.reconcileService('web-lb');
    expect(w.cluster.service('tenant-a', 'web-lb')!.metadata!.annotations).toEqual({ [CLAIM]: 'missing' });
    expect(serviceCondition(w, 'web-lb')).toMatchObject({ status: 'False', reason: 'ClaimNotFound' });
  });

  it('a Service naming no claim keeps an admin’s pin (Conflict detection reports it, nothing undoes it)', async () => {
    const w = boundWorld();
    w.cluster.putService(tenantService('admin-pinned', { [PIN]: '203.0.113.5' }));
    await w.reconcileService('admin-pinned');
    expect(pinOf(w, 'admin-pinned')).toBe('203.0.113.5');
    expect(serviceCondition(w, 'admin-pinned')).toBeUndefined();
  });
});

describe('a replace that dropped the driver’s keys', () => {
  /** web-lb carrying web's 203.0.113.1; then `edit` rewrites it as a tenant's write would, and the Service pass runs: its writes. */
  async function carriedThenEdited(edit: (s: V1Service) => void) {
    const w = boundWorld();
    await w.reconcileAddress();
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }));
    await w.reconcileService('web-lb');
    w.cluster.assign('tenant-a', 'web-lb', '203.0.113.1');
    const edited = w.cluster.service('tenant-a', 'web-lb')!;
    edit(edited);
    w.cluster.putService(edited);
    w.cluster.log.length = 0;
    await w.reconcileService('web-lb');
    return { w, writes: w.cluster.log.map((l) => l.split(' ').slice(0, 2).join(' ')) };
  }
  const HELD_REPINNED_RELEASED = [`create Service/${PH}/iad-ip-203-0-113-1`, 'update Service/tenant-a/web-lb', `delete Service/${PH}/iad-ip-203-0-113-1`];

  it('holds the IP again before re-pinning, then lets the hold go: the same IP comes back, three writes', async () => {
    // kubectl replace of the tenant's own manifest: the annotation only; MetalLB then frees the IP.
    const { w, writes } = await carriedThenEdited((replaced) => {
      replaced.metadata!.annotations = { [CLAIM]: 'web' };
      replaced.metadata!.labels = {};
      replaced.status = { ...replaced.status, loadBalancer: {} };
    });
    expect(writes).toEqual(HELD_REPINNED_RELEASED);
    expect(pinOf(w, 'web-lb')).toBe('203.0.113.1');
  });

  it('the carrier label alone taken off (the pin kept) frees the IP in MetalLB too: held again first, then labelled', async () => {
    const { writes } = await carriedThenEdited((stripped) => {
      stripped.metadata!.labels = {};
    });
    expect(writes).toEqual(HELD_REPINNED_RELEASED);
  });

  it('a re-apply that keeps the driver’s keys costs nothing', async () => {
    const w = boundWorld();
    await w.reconcileAddress();
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }));
    await w.reconcileService('web-lb');
    await w.reconcileAttachment();
    const reapplied = w.cluster.service('tenant-a', 'web-lb')!;
    reapplied.metadata!.labels = { ...reapplied.metadata!.labels, 'app.kubernetes.io/version': '2' };
    w.cluster.putService(reapplied);
    w.cluster.log.length = 0;
    await w.reconcileService('web-lb');
    await w.reconcileAttachment();
    await w.reconcileAddress();
    expect(w.cluster.log).toEqual([]);
  });
});
