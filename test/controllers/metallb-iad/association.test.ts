import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { associationHolds, associationVerdict, serviceFamilies } from '../../../controllers/metallb-iad/association.js';
import { boundAddress, boundClaim, pendingClaim, PH, publicClass, tenantService, world } from './fixtures.js';

const CLAIM = 'local.sdn.cozystack.io/ip-address-claim';
const PIN = 'metallb.io/loadBalancerIPs';
const MARKER = 'metallb.drivers.local.sdn.cozystack.io/pinned';
const CARRIER = 'metallb.drivers.local.sdn.cozystack.io/carrier';
const AT_WEB_LB = { kind: 'Service', namespace: 'tenant-a', name: 'web-lb' };

function bound() {
  const w = world();
  w.cluster.putClass(publicClass());
  w.cluster.putClaim(boundClaim());
  w.cluster.putAddress(boundAddress());
  return w;
}
const reason = (w: ReturnType<typeof world>, service: V1Service) => {
  const verdict = associationVerdict(w.cluster, service);
  return verdict.ok ? 'ok' : (verdict.refusal?.reason ?? 'silent');
};

describe('the association rule', () => {
  it('reads a Service’s families as MetalLB does: spec.ipFamilies, else its cluster IPs', () => {
    expect(serviceFamilies(tenantService('a', {}, undefined, ['IPv6', 'IPv4']))).toEqual(['IPv6', 'IPv4']);
    expect(serviceFamilies({ spec: { clusterIPs: ['10.0.0.1', 'fd00::1'] } })).toEqual(['IPv4', 'IPv6']);
    expect(serviceFamilies({ spec: { clusterIP: 'fd00::1' } })).toEqual(['IPv6']);
    expect(serviceFamilies({ spec: {} })).toEqual([]);
  });

  it('gives a LoadBalancer of the claim’s families the claim’s Bound addresses', () => {
    const w = bound();
    const verdict = associationVerdict(w.cluster, tenantService('web-lb', { [CLAIM]: 'web' }));
    expect(verdict.ok && verdict.addresses.map((a) => a.metadata.name)).toEqual(['ip-203-0-113-1']);
  });

  it.each([
    ['no annotation', tenantService('web-lb'), 'silent'],
    ['being deleted', { ...tenantService('web-lb', { [CLAIM]: 'web' }), metadata: { name: 'web-lb', namespace: 'tenant-a', annotations: { [CLAIM]: 'web' }, deletionTimestamp: new Date() } }, 'silent'],
    ['not a LoadBalancer', { ...tenantService('web-lb', { [CLAIM]: 'web' }), spec: { type: 'ClusterIP', ipFamilies: ['IPv4'] } }, 'NotLoadBalancer'],
    ['a missing claim', tenantService('web-lb', { [CLAIM]: 'nope' }), 'ClaimNotFound'],
    ['IPv6 only for an IPv4 claim', tenantService('web-lb', { [CLAIM]: 'web' }, undefined, ['IPv6']), 'WrongFamily'],
    ['dual-stack for an IPv4 claim (PreferDualStack on a dual-stack cluster)', tenantService('web-lb', { [CLAIM]: 'web' }, undefined, ['IPv4', 'IPv6']), 'WrongFamily'],
  ] as [string, V1Service, string][])('refuses %s', (_what, service, expected) => {
    expect(reason(bound(), service)).toBe(expected);
  });

  it('a claim not yet stamped by the core, or Pending, is waited for; another driver’s claim is left to that driver', () => {
    const w = world();
    w.cluster.putClass(publicClass());
    const unstamped = pendingClaim();
    unstamped.metadata.annotations = {};
    w.cluster.putClaim(unstamped);
    expect(reason(w, tenantService('web-lb', { [CLAIM]: 'web' }))).toBe('ClaimNotBound');
    w.cluster.putClaim(pendingClaim());
    expect(reason(w, tenantService('web-lb', { [CLAIM]: 'web' }))).toBe('ClaimNotBound');
    w.cluster.putClaim(pendingClaim(undefined, 'other.drivers.example.com'));
    expect(reason(w, tenantService('web-lb', { [CLAIM]: 'web' }))).toBe('silent');
  });

  it('a Bound claim whose address is missing, being deleted, or recorded for an earlier claim of the same name is waited for', () => {
    const w = bound();
    w.cluster.putAddress({ ...boundAddress(), spec: { ...boundAddress().spec, claimRef: { namespace: 'tenant-a', name: 'web', uid: 'an-earlier-web' } } });
    expect(reason(w, tenantService('web-lb', { [CLAIM]: 'web' }))).toBe('ClaimNotBound');
    w.cluster.addresses.clear();
    expect(reason(w, tenantService('web-lb', { [CLAIM]: 'web' }))).toBe('ClaimNotBound');
  });

  it('one claim serves one workload: refused while the association of another Service holds, given once it does not', () => {
    const w = bound();
    w.cluster.putAddress(boundAddress({ phase: 'Bound', associatedTo: AT_WEB_LB }));
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }));
    expect(reason(w, tenantService('second', { [CLAIM]: 'web' }))).toBe('AssociationRejected');
    // web-lb switched to another claim: its association with web's address no longer holds.
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'other' }));
    expect(associationHolds(w.cluster, w.cluster.address('ip-203-0-113-1')!, AT_WEB_LB)).toBe(false);
    expect(reason(w, tenantService('second', { [CLAIM]: 'web' }))).toBe('ok');
  });

  it('holds exactly while the named Service exists, names the claim, and may carry the address', () => {
    const w = bound();
    const address = () => w.cluster.address('ip-203-0-113-1')!;
    w.cluster.putAddress(boundAddress({ phase: 'Bound', associatedTo: AT_WEB_LB }));
    expect(associationHolds(w.cluster, address(), AT_WEB_LB)).toBe(false); // no such Service
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }));
    expect(associationHolds(w.cluster, address(), AT_WEB_LB)).toBe(true);
    w.cluster.putService(tenantService('web-lb'));
    expect(associationHolds(w.cluster, address(), AT_WEB_LB)).toBe(false); // annotation removed
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }, undefined, ['IPv6']));
    expect(associationHolds(w.cluster, address(), AT_WEB_LB)).toBe(false); // wrong family
    w.cluster.putService(tenantService('web-lb', { [CLAIM]: 'web' }));
    w.cluster.claims.clear();
    expect(associationHolds(w.cluster, address(), AT_WEB_LB)).toBe(false); // claim gone
  });
});

describe('the release sequence', () => {
  it('a Service switched from claim web to claim api: web’s hold is made before the Service lets go, api’s goes only after the Service asks for it', async () => {
    const w = bound();
    const api = { ...boundClaim(), metadata: { ...boundClaim().metadata, name: 'api', uid: 'claim-uid-2' }, status: { phase: 'Bound' as const, className: 'public', addresses: [{ name: 'ip-203-0-113-2', address: '203.0.113.2' }] } };
    w.cluster.putClaim(api);
    w.cluster.putAddress({ ...boundAddress(), metadata: { ...boundAddress().metadata, name: 'ip-203-0-113-2', uid: 'addr-uid-2' }, spec: { ...boundAddress().spec, address: '203.0.113.2', claimRef: { namespace: 'tenant-a', name: 'api', uid: 'claim-uid-2' } } });
    await w.reconcileAddress('ip-203-0-113-2'); // api's address is held
    w.cluster.putAddress(boundAddress({ phase: 'Bound', associatedTo: AT_WEB_LB }));
    const pinned = tenantService('web-lb', { [CLAIM]: 'api', [PIN]: '203.0.113.1', [MARKER]: 'true' }, '203.0.113.1');
    w.cluster.putService({ ...pinned, metadata: { ...pinned.metadata, labels: { [CARRIER]: 'true' } } });
    w.cluster.log.length = 0;
    await w.reconcileService('web-lb');
    expect(w.cluster.log.map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual([
      `create Service/${PH}/iad-ip-203-0-113-1`, // web's hold first: it waits in MetalLB for the IP
      'status IPAddress/ip-203-0-113-2', // api's association recorded
      'update Service/tenant-a/web-lb', // the pin moves: MetalLB takes 203.0.113.1 back, to web's hold
      `delete Service/${PH}/iad-ip-203-0-113-2`, // only now does api's hold let go
      'status Service/tenant-a/web-lb', // the verdict: its Attached condition now names api
    ]);
    expect(w.cluster.service('tenant-a', 'web-lb')!.metadata?.annotations?.[PIN]).toBe('203.0.113.2');
    // web's address stays associated until MetalLB has taken the IP from the Service, then is cleared.
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo).toEqual(AT_WEB_LB);
    w.cluster.assign('tenant-a', 'web-lb', '203.0.113.2');
    await w.reconcileAddress();
    expect(w.cluster.address('ip-203-0-113-1')!.status?.associatedTo).toBeUndefined();
  });

  it('a refusal changes nothing held: the hold stays, the Service is not pinned; the verdict is its condition, said once, with Events on the Service and the claim', async () => {
    const w = bound();
    await w.reconcileAddress();
    w.cluster.putService(tenantService('v6', { [CLAIM]: 'web' }, undefined, ['IPv6']));
    w.cluster.log.length = 0;
    w.events.events.length = 0;
    await w.reconcileService('v6');
    expect(w.cluster.log).toEqual(['status Service/tenant-a/v6 ["local.sdn.cozystack.io/Attached=False/WrongFamily"]']);
    expect(w.events.events.map((e) => `${e.object} ${e.type} ${e.reason}`)).toEqual(['Service/v6 Warning WrongFamily', 'IPAddressClaim/web Warning WrongFamily']);
    // Said already: another pass writes nothing and says nothing again.
    w.cluster.log.length = 0;
    w.events.events.length = 0;
    await w.reconcileService('v6');
    expect(w.cluster.log).toEqual([]);
    expect(w.events.events).toEqual([]);
  });
});

describe('what is not the driver’s', () => {
  it('an admin’s pin with the carrier label, without the driver’s marker, is never undone: the IP it carries is a Conflict', async () => {
    const w = bound();
    const thief = tenantService('thief', { [PIN]: '203.0.113.1' }, '203.0.113.1');
    w.cluster.putService({ ...thief, metadata: { ...thief.metadata, namespace: 'default', labels: { [CARRIER]: 'true' } } });
    await w.reconcileService('thief', 'default');
    expect(w.cluster.log.filter((l) => l.startsWith('update Service'))).toEqual([]);
    expect(w.cluster.address('ip-203-0-113-1')!.status?.phase).toBe('Conflict');
  });
});

describe('an allocation handed an IP the books give to another', () => {
  it('gives it back, makes that address’s hold, and asks again only once the hold has the IP', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    await w.reconcileClass(); // its pool first: without one nothing is reserved (BackendNotReady)
    w.cluster.putClaim(pendingClaim());
    // A Released address of an earlier claim of the same name, its hold not made yet.
    w.cluster.putAddress({ ...boundAddress({ phase: 'Released' }), spec: { ...boundAddress().spec, claimRef: { namespace: 'tenant-a', name: 'web', uid: 'an-earlier-web' } } });
    await w.reconcileClaim();
    w.cluster.assign(PH, 'iad-claim-uid-1-v4', '203.0.113.1');
    const result = await w.reconcileClaim();
    expect(result).toEqual({ requeueAfterMs: expect.any(Number) });
    expect(w.cluster.service(PH, 'iad-claim-uid-1-v4')).toBeUndefined();
    expect(w.cluster.placeholdersOf('ip-203-0-113-1').map((p) => p.metadata?.annotations?.[PIN])).toEqual(['203.0.113.1']);
    expect(w.events.reasons()).toContain('LedgerMismatch');
    await w.reconcileClaim();
    expect(w.cluster.service(PH, 'iad-claim-uid-1-v4')).toBeUndefined(); // the hold has not got the IP yet
    w.cluster.assign(PH, 'iad-ip-203-0-113-1', '203.0.113.1');
    await w.reconcileClaim();
    expect(w.cluster.service(PH, 'iad-claim-uid-1-v4')).toBeDefined();
  });
});

describe('the class pool admits only carriers', () => {
  it('only once every Service holding an IP of the class carries the label (an upgrade labels them first)', async () => {
    const w = bound();
    const old = tenantService('web-lb', { [CLAIM]: 'web', [PIN]: '203.0.113.1', [MARKER]: 'true' }, '203.0.113.1');
    w.cluster.putService(old);
    expect(await w.reconcileClass()).toEqual({ requeueAfterMs: expect.any(Number) });
    expect(w.cluster.pool('public')!.spec?.serviceAllocation).toBeUndefined();
    w.cluster.putService({ ...old, metadata: { ...old.metadata, labels: { [CARRIER]: 'true' } } });
    expect(await w.reconcileClass()).toBeUndefined();
    expect(w.cluster.pool('public')!.spec?.serviceAllocation).toEqual({ serviceSelectors: [{ matchLabels: { [CARRIER]: 'true' } }] });
  });
});
