/** Sharing (docs/driver.md, "Sharing"): one Shared claim's addresses on several Services, by MetalLB's rules. */
import type { V1Service, V1ServicePort } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { associationVerdict, backendKey, servicePorts } from '../../../controllers/metallb-iad/association.js';
import { claimAttachment } from '../../../controllers/metallb-iad/attachment.js';
import { boundAddress, boundClaim, PH, publicClass, tenantService, world } from './fixtures.js';

const CLAIM = 'local.sdn.cozystack.io/ip-address-claim';
const PIN = 'metallb.io/loadBalancerIPs';
const SHARE = 'metallb.io/allow-shared-ip';
const KEY = 'metallb.drivers.local.sdn.cozystack.io/claim-uid-1';
const IP = '203.0.113.1';
const at = (name: string) => ({ kind: 'Service', namespace: 'tenant-a', name });

/** A Service naming claim web, created at second `second` (the rule orders by age), on these ports. */
function naming(name: string, second: number, ports: V1ServicePort[], more: Partial<V1Service['spec']> = {}, ingress?: string): V1Service {
  const service = tenantService(name, { [CLAIM]: 'web' }, ingress);
  return {
    ...service,
    metadata: { ...service.metadata, creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, second)) },
    spec: { ...service.spec, ports, ...more },
  };
}

function sharedWorld(sharing: 'Shared' | 'Exclusive' = 'Shared') {
  const w = world();
  w.cluster.putClass(publicClass());
  w.cluster.putClaim({ ...boundClaim(), spec: { className: 'public', family: 'IPv4', sharing } });
  w.cluster.putAddress(boundAddress());
  return w;
}
const reason = (w: ReturnType<typeof world>, name: string) => {
  const verdict = associationVerdict(w.cluster, w.cluster.service('tenant-a', name)!);
  return verdict.ok ? 'ok' : (verdict.refusal?.reason ?? 'silent');
};
const web80 = () => naming('web', 1, [{ port: 80, protocol: 'TCP' }]);
const tls443 = () => naming('tls', 2, [{ port: 443, protocol: 'TCP' }]);

describe('MetalLB’s sharing rules, as its allocator keys them', () => {
  it('ports are protocol and port (TCP when unset); the backend key is the selector under Local, empty under Cluster', () => {
    expect(servicePorts(naming('a', 1, [{ port: 53, protocol: 'UDP' }, { port: 53 }]))).toEqual(['UDP/53', 'TCP/53']);
    expect(backendKey(naming('a', 1, [], { externalTrafficPolicy: 'Cluster', selector: { app: 'x' } }))).toBe('');
    expect(backendKey(naming('a', 1, [], { externalTrafficPolicy: 'Local', selector: { tier: 'web', app: 'x' } }))).toBe('app=x,tier=web');
  });
});

describe('the association rule for a Shared claim', () => {
  it('every admitted Service on disjoint ports carries the address; the claim lists them all, oldest first', () => {
    const w = sharedWorld();
    w.cluster.putService(tls443());
    w.cluster.putService(web80());
    expect(reason(w, 'web')).toBe('ok');
    expect(reason(w, 'tls')).toBe('ok');
    const said = claimAttachment(w.cluster, w.cluster.claim('tenant-a', 'web')!);
    expect(said.carriers).toEqual([at('web'), at('tls')]);
    expect(said.condition?.message).toBe(`Service web carries ${IP}; Service tls carries ${IP}`);
  });

  it('a port and protocol an older Service uses is refused (PortInUse); the same port on another protocol is not', () => {
    const w = sharedWorld();
    w.cluster.putService(web80());
    w.cluster.putService(naming('also80', 3, [{ port: 8080, protocol: 'TCP' }, { port: 80, protocol: 'TCP' }]));
    w.cluster.putService(naming('udp80', 4, [{ port: 80, protocol: 'UDP' }]));
    expect(reason(w, 'web')).toBe('ok');
    expect(reason(w, 'also80')).toBe('PortInUse');
    expect(reason(w, 'udp80')).toBe('ok');
    const verdict = associationVerdict(w.cluster, w.cluster.service('tenant-a', 'also80')!);
    expect(verdict.ok ? '' : verdict.refusal?.message).toBe(`TCP/80 on IPAddressClaim web's ${IP} is already served by Service web; Services sharing an address need disjoint ports`);
  });

  it('a Service carrying the address keeps its ports against a newcomer that sorts older (made in the same second, an earlier name)', () => {
    const w = sharedWorld();
    w.cluster.putAddress(boundAddress({ phase: 'Bound', associatedTo: at('web') }));
    w.cluster.putService(web80());
    w.cluster.putService(naming('a-new', 1, [{ port: 80, protocol: 'TCP' }]));
    expect([reason(w, 'web'), reason(w, 'a-new')]).toEqual(['ok', 'PortInUse']);
    // Without the carrier recorded, the rule alone orders them: the earlier name first.
    w.cluster.putAddress(boundAddress());
    expect([reason(w, 'web'), reason(w, 'a-new')]).toEqual(['PortInUse', 'ok']);
  });

  it('externalTrafficPolicy Local shares only with Local Services selecting the same Pods (BackendMismatch otherwise)', () => {
    const w = sharedWorld();
    const local = (name: string, second: number, port: number, selector: Record<string, string>) =>
      naming(name, second, [{ port, protocol: 'TCP' }], { externalTrafficPolicy: 'Local', selector });
    w.cluster.putService(local('a', 1, 80, { app: 'x' }));
    w.cluster.putService(local('same', 2, 443, { app: 'x' }));
    w.cluster.putService(local('other', 3, 8443, { app: 'y' }));
    w.cluster.putService(naming('cluster', 4, [{ port: 9000, protocol: 'TCP' }], { externalTrafficPolicy: 'Cluster', selector: { app: 'x' } }));
    expect(['a', 'same', 'other', 'cluster'].map((n) => reason(w, n))).toEqual(['ok', 'ok', 'BackendMismatch', 'BackendMismatch']);
  });

  it('an Exclusive claim still serves one workload, and says how to share', () => {
    const w = sharedWorld('Exclusive');
    w.cluster.putService(web80());
    w.cluster.putService(tls443());
    expect(reason(w, 'tls')).toBe('AssociationRejected');
    const verdict = associationVerdict(w.cluster, w.cluster.service('tenant-a', 'tls')!);
    expect(verdict.ok ? '' : verdict.refusal?.message).toContain('unless its spec.sharing is Shared');
  });
});

describe('the driver’s writes for a Shared claim', () => {
  it('pins every carrier with the claim’s sharing key, records each as a holder, and lets the hold go once', async () => {
    const w = sharedWorld();
    await w.reconcileAddress(); // held
    w.cluster.putService(web80());
    w.cluster.putService(tls443());
    await w.reconcileService('web');
    await w.reconcileService('tls');
    for (const name of ['web', 'tls']) {
      const annotations = w.cluster.service('tenant-a', name)!.metadata?.annotations;
      expect([annotations?.[PIN], annotations?.[SHARE]]).toEqual([IP, KEY]);
    }
    const address = w.cluster.address('ip-203-0-113-1')!;
    expect([address.status?.associatedTo, address.status?.sharedWith]).toEqual([at('web'), [at('tls')]]);
    expect(w.cluster.placeholdersOf('ip-203-0-113-1')).toEqual([]);
  });

  it('the first carrier leaving: no hold, the IP stays with the other, which becomes associatedTo once the first has let go', async () => {
    const w = sharedWorld();
    w.cluster.putAddress(boundAddress({ phase: 'Bound', associatedTo: at('web'), sharedWith: [at('tls')] }));
    w.cluster.putService({ ...naming('web', 1, [{ port: 80 }], {}, IP), metadata: { ...web80().metadata, annotations: { [CLAIM]: 'web', [PIN]: IP, [SHARE]: KEY, 'metallb.drivers.local.sdn.cozystack.io/pinned': 'true' }, labels: { 'metallb.drivers.local.sdn.cozystack.io/carrier': 'true' } } });
    w.cluster.putService(naming('tls', 2, [{ port: 443 }], {}, IP));
    await w.reconcileService('tls');
    // web stops naming the claim: it is unpinned, and nothing holds the IP while tls carries it.
    const web = w.cluster.service('tenant-a', 'web')!;
    w.cluster.putService({ ...web, metadata: { ...web.metadata, annotations: { ...web.metadata!.annotations, [CLAIM]: 'other' } } });
    w.cluster.log.length = 0;
    await w.reconcileService('web');
    expect(w.cluster.log.some((l) => l.startsWith(`create Service/${PH}`))).toBe(false);
    expect(w.cluster.service('tenant-a', 'web')!.metadata?.annotations?.[SHARE]).toBeUndefined();
    expect(w.cluster.placeholdersOf('ip-203-0-113-1')).toEqual([]); // a key changed in place frees nothing: no hold
    await w.reconcileAddress();
    expect(w.cluster.address('ip-203-0-113-1')!.status?.sharedWith).toEqual([at('tls')]); // web still carries the IP in MetalLB
    w.cluster.assign('tenant-a', 'web', '');
    await w.reconcileAddress();
    const address = w.cluster.address('ip-203-0-113-1')!;
    expect([address.status?.associatedTo, address.status?.sharedWith]).toEqual([at('tls'), undefined]);
    expect(w.cluster.placeholdersOf('ip-203-0-113-1')).toEqual([]);
  });

  it('the last carrier leaving is held first, as for an Exclusive claim', async () => {
    const w = sharedWorld();
    w.cluster.putAddress(boundAddress({ phase: 'Bound', associatedTo: at('tls') }));
    w.cluster.putService({ ...naming('tls', 2, [{ port: 443 }], {}, IP), metadata: { ...tls443().metadata, annotations: { [PIN]: IP, [SHARE]: KEY, 'metallb.drivers.local.sdn.cozystack.io/pinned': 'true' } } });
    w.cluster.log.length = 0;
    await w.reconcileService('tls');
    expect(w.cluster.log.map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual([`create Service/${PH}/iad-ip-203-0-113-1`, 'update Service/tenant-a/tls']);
    expect(w.cluster.service('tenant-a', 'tls')!.metadata?.annotations?.[SHARE]).toBeUndefined();
  });

  it('a claim made Exclusive: the oldest keeps its IP and its key until the other has let go, then the key comes off', async () => {
    const w = sharedWorld('Exclusive');
    w.cluster.putAddress(boundAddress({ phase: 'Bound', associatedTo: at('web'), sharedWith: [at('tls')] }));
    const pinned = (s: V1Service): V1Service => ({ ...s, metadata: { ...s.metadata, annotations: { ...s.metadata!.annotations, [PIN]: IP, [SHARE]: KEY, 'metallb.drivers.local.sdn.cozystack.io/pinned': 'true' }, labels: { 'metallb.drivers.local.sdn.cozystack.io/carrier': 'true' } } });
    w.cluster.putService(pinned(naming('web', 1, [{ port: 80 }], {}, IP)));
    w.cluster.putService(pinned(naming('tls', 2, [{ port: 443 }], {}, IP)));
    await w.reconcileService('web');
    expect(w.cluster.service('tenant-a', 'web')!.metadata?.annotations?.[SHARE]).toBe(KEY); // tls still holds the IP in MetalLB
    await w.reconcileService('tls');
    expect(w.cluster.service('tenant-a', 'tls')!.metadata?.annotations?.[PIN]).toBeUndefined();
    w.cluster.assign('tenant-a', 'tls', '');
    await w.reconcileService('web');
    expect(w.cluster.service('tenant-a', 'web')!.metadata?.annotations).toMatchObject({ [PIN]: IP });
    expect(w.cluster.service('tenant-a', 'web')!.metadata?.annotations?.[SHARE]).toBeUndefined();
    expect(w.cluster.placeholdersOf('ip-203-0-113-1')).toEqual([]); // a key changed in place frees nothing: no hold
    await w.reconcileAddress();
    expect(w.cluster.address('ip-203-0-113-1')!.status?.sharedWith).toBeUndefined();
  });

  it('a sharing key a tenant’s manifest brings is the driver’s to set: an Exclusive claim’s carrier loses it', async () => {
    const w = sharedWorld('Exclusive');
    await w.reconcileAddress();
    const s = web80();
    w.cluster.putService({ ...s, metadata: { ...s.metadata, annotations: { ...s.metadata!.annotations, [SHARE]: 'mine', 'metallb.universe.tf/allow-shared-ip': 'mine' } } });
    await w.reconcileService('web');
    const annotations = w.cluster.service('tenant-a', 'web')!.metadata?.annotations ?? {};
    expect([annotations[PIN], annotations[SHARE], annotations['metallb.universe.tf/allow-shared-ip']]).toEqual([IP, undefined, undefined]);
  });
});
