import type { V1ResourceQuota, V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { API_VERSION, IP_ADDRESS_CLAIM_ANNOTATION, METALLB_PROVISIONER, type IPAddress, type IPAddressClaim, type IPAddressClass } from '../../../../api/v1alpha1/index.js';
import {
  ADOPTED_FROM_ANNOTATION,
  ADOPTED_LABEL,
  adoptionClass,
  heldIps,
  NO_KEYS,
  planAdoption,
  planUndo,
  restoredKeys,
  SERVICE_BEFORE_ANNOTATION,
  type AdoptionWorld,
} from '../../../../controllers/metallb-iad/adopt/plan.js';
import { ipObjectName } from '../../../../controllers/metallb-iad/names.js';
import { CARRIER_LABEL, PIN_ANNOTATION, PINNED_ANNOTATION, SERVED_BY_CLASS_ANNOTATION } from '../../../../controllers/metallb-iad/well-known.js';
import type { MetallbObject } from '../../../../controllers/metallb-iad/store.js';

const POOL: MetallbObject = {
  apiVersion: 'metallb.io/v1beta1',
  kind: 'IPAddressPool',
  metadata: { name: 'legacy', namespace: 'metallb-system' },
  spec: { addresses: ['192.0.2.0/26', '2001:db8::/120'], autoAssign: true },
};

function lb(namespace: string, name: string, ips: string[], extra: Partial<V1Service['metadata']> = {}, families?: string[]): V1Service {
  return {
    metadata: { namespace, name, ...extra },
    spec: { type: 'LoadBalancer', ipFamilies: families ?? ips.map((ip) => (ip.includes(':') ? 'IPv6' : 'IPv4')) },
    status: { loadBalancer: { ingress: ips.map((ip) => ({ ip })) } },
  };
}

function world(services: V1Service[], more: Partial<AdoptionWorld> = {}): AdoptionWorld {
  return {
    className: 'legacy',
    poolName: 'legacy',
    metallbNamespace: 'metallb-system',
    pool: POOL,
    ipClass: undefined,
    services,
    claim: () => undefined,
    address: () => undefined,
    quotas: () => [],
    ...more,
  };
}

const marked = { labels: { [ADOPTED_LABEL]: 'true' } };

describe('planAdoption', () => {
  it('adopts each Service as one claim of its name, an IPAddress per IP named as the driver names it, Dual for two families', () => {
    const plan = planAdoption(world([lb('tenant-a', 'web', ['192.0.2.7']), lb('tenant-b', 'api', ['2001:db8::9', '192.0.2.9'])]));
    expect(plan).toEqual({
      ok: true,
      createClass: true,
      adoptions: [
        expect.objectContaining({ namespace: 'tenant-a', name: 'web', claimName: 'web', family: 'IPv4', ips: ['192.0.2.7'], addressNames: ['ip-192-0-2-7'], complete: false }),
        expect.objectContaining({ namespace: 'tenant-b', name: 'api', family: 'Dual', ips: ['192.0.2.9', '2001:db8::9'], addressNames: ['ip-192-0-2-9', ipObjectName('2001:db8::9')] }),
      ],
    });
  });

  it("records the Service's values of every key adoption changes, absent ones as null", () => {
    const service = lb('tenant-a', 'web', ['192.0.2.7'], { annotations: { [PIN_ANNOTATION]: '192.0.2.7', other: 'x' } });
    const plan = planAdoption(world([service]));
    expect(plan.ok && plan.adoptions[0]!.before).toEqual({
      annotations: { [IP_ADDRESS_CLAIM_ANNOTATION]: null, [PIN_ANNOTATION]: '192.0.2.7', [PINNED_ANNOTATION]: null },
      labels: { [CARRIER_LABEL]: null },
    });
  });

  it('refuses every bad Service with one line each, and then adopts none of the good ones', () => {
    const clusterIp: V1Service = { metadata: { namespace: 'tenant-a', name: 'internal' }, spec: { type: 'ClusterIP' } };
    const taken: IPAddressClaim = { apiVersion: API_VERSION, kind: 'IPAddressClaim', metadata: { namespace: 'tenant-a', name: 'taken' }, spec: {} };
    const plan = planAdoption(
      world(
        [
          lb('tenant-a', 'good', ['192.0.2.1']),
          clusterIp,
          lb('tenant-a', 'pending', []),
          lb('tenant-a', 'elsewhere', ['198.51.100.3']),
          lb('tenant-a', 'attached', ['192.0.2.2'], { annotations: { [IP_ADDRESS_CLAIM_ANNOTATION]: 'mine' } }),
          lb('tenant-a', 'taken', ['192.0.2.3']),
          lb('tenant-a', 'recorded', ['192.0.2.4']),
          lb('tenant-a', 'families', ['192.0.2.5'], {}, ['IPv4', 'IPv6']),
        ],
        {
          claim: (namespace, name) => (namespace === 'tenant-a' && name === 'taken' ? taken : undefined),
          address: (name) =>
            name === 'ip-192-0-2-4'
              ? ({ metadata: { name }, spec: { className: 'x', address: '192.0.2.4', claimRef: { namespace: 'tenant-b', name: 'b' }, source: {} } } as IPAddress)
              : undefined,
        },
      ),
    );
    expect(plan).toEqual({
      ok: false,
      refusals: [
        'tenant-a/internal: type ClusterIP, not LoadBalancer: it holds no address to adopt',
        'tenant-a/pending: has no address yet (status.loadBalancer.ingress is empty)',
        'tenant-a/elsewhere: holds 198.51.100.3, outside pool legacy; IPAddressClass legacy cannot serve it',
        `tenant-a/attached: already attached through IPAddressClaim tenant-a/mine (annotation ${IP_ADDRESS_CLAIM_ANNOTATION})`,
        'tenant-a/taken: IPAddressClaim tenant-a/taken exists and was not made by adopting this Service; rename or delete it first',
        'tenant-a/recorded: 192.0.2.4 is recorded already as IPAddress ip-192-0-2-4 (bound to IPAddressClaim tenant-b/b)',
        'tenant-a/families: holds IPv4 but spec.ipFamilies is IPv4,IPv6; the driver pins only a Service whose families match its claim',
      ],
    });
  });

  it('refuses a missing pool, a pool another class serves, and a class of the same name that is something else', () => {
    expect(planAdoption(world([], { pool: undefined }))).toEqual({ ok: false, refusals: ['IPAddressPool metallb-system/legacy not found'] });
    const served = { ...POOL, metadata: { ...POOL.metadata, annotations: { [SERVED_BY_CLASS_ANNOTATION]: 'other' } } };
    expect(planAdoption(world([], { pool: served })).ok).toBe(false);
    const ipClass: IPAddressClass = { apiVersion: API_VERSION, kind: 'IPAddressClass', metadata: { name: 'legacy' }, spec: { provisioner: METALLB_PROVISIONER, parameters: { addresses: ['192.0.2.0/26'] } } };
    expect(planAdoption(world([lb('tenant-a', 'web', ['192.0.2.7'])], { ipClass }))).toEqual({
      ok: false,
      refusals: [`IPAddressClass legacy exists and does not take over pool legacy (provisioner ${METALLB_PROVISIONER}, pool iad-legacy); choose another --class`],
    });
    expect(planAdoption(world([lb('tenant-a', 'web', ['192.0.2.7'])], { ipClass: adoptionClass('legacy', 'legacy') }))).toMatchObject({ ok: true, createClass: false });
  });

  it('refuses more claims than a namespace quota admits', () => {
    const quota: V1ResourceQuota = {
      metadata: { name: 'q' },
      spec: { hard: { 'count/ipaddressclaims.local.sdn.cozystack.io': '2' } },
      status: { hard: { 'count/ipaddressclaims.local.sdn.cozystack.io': '2' }, used: { 'count/ipaddressclaims.local.sdn.cozystack.io': '1' } },
    };
    const plan = planAdoption(world([lb('tenant-a', 'a', ['192.0.2.1']), lb('tenant-a', 'b', ['192.0.2.2'])], { quotas: () => [quota] }));
    expect(plan).toEqual({ ok: false, refusals: ['tenant-a: 2 claims to adopt, but ResourceQuota q admits 1 more (count/ipaddressclaims.local.sdn.cozystack.io: 2)'] });
    const uncounted: V1ResourceQuota = { metadata: { name: 'fresh' }, spec: quota.spec };
    expect(planAdoption(world([lb('tenant-a', 'a', ['192.0.2.1'])], { quotas: () => [uncounted] }))).toEqual({
      ok: false,
      refusals: ['tenant-a: ResourceQuota fresh has not been counted yet (its status has no usage of claims yet); adopt again in a moment'],
    });
  });

  it('recognises its own half-done work: a rerun keeps the recorded keys and calls a finished Service complete', () => {
    const before = { annotations: { [IP_ADDRESS_CLAIM_ANNOTATION]: null, [PIN_ANNOTATION]: null, [PINNED_ANNOTATION]: null }, labels: { [CARRIER_LABEL]: null } };
    const ours = { labels: marked.labels, annotations: { [ADOPTED_FROM_ANNOTATION]: 'tenant-a/web', [SERVICE_BEFORE_ANNOTATION]: JSON.stringify(before) } };
    const address: IPAddress = {
      apiVersion: API_VERSION,
      kind: 'IPAddress',
      metadata: { name: 'ip-192-0-2-7', ...ours },
      spec: { className: 'legacy', address: '192.0.2.7', claimRef: { namespace: 'tenant-a', name: 'web' }, source: {} },
      status: { associatedTo: { kind: 'Service', namespace: 'tenant-a', name: 'web' } },
    };
    const claim: IPAddressClaim = { apiVersion: API_VERSION, kind: 'IPAddressClaim', metadata: { namespace: 'tenant-a', name: 'web', ...ours }, spec: {} };
    // Pinned by the driver since: the recorded keys, not today's, are what undo puts back.
    const pinned = lb('tenant-a', 'web', ['192.0.2.7'], {
      annotations: { [IP_ADDRESS_CLAIM_ANNOTATION]: 'web', [PIN_ANNOTATION]: '192.0.2.7', [PINNED_ANNOTATION]: 'true' },
      labels: { [CARRIER_LABEL]: 'true' },
    });
    const plan = planAdoption(world([pinned], { claim: () => claim, address: () => address, ipClass: adoptionClass('legacy', 'legacy') }));
    expect(plan).toMatchObject({ ok: true, adoptions: [{ complete: true, before }] });
  });

  it("reads a Service's IPs in the driver's pin order whatever order MetalLB wrote its ingress in", () => {
    // MetalLB lists a dual-stack Service's IPv6 address first in some runs: the wait for the pin must not depend on it.
    expect(heldIps(lb('tenant-c', 'dual', ['2001:db8::1', '192.0.2.1']))).toEqual(['192.0.2.1', '2001:db8::1']);
    expect(heldIps(lb('tenant-c', 'dual', ['192.0.2.1', '2001:db8::1', '192.0.2.1']))).toEqual(['192.0.2.1', '2001:db8::1']);
    const v6First = planAdoption(world([lb('tenant-c', 'dual', ['2001:db8::1', '192.0.2.1'])]));
    const v4First = planAdoption(world([lb('tenant-c', 'dual', ['192.0.2.1', '2001:db8::1'])]));
    expect(v6First).toEqual(v4First);
  });

  it('refuses an IP two Services share', () => {
    const plan = planAdoption(world([lb('tenant-a', 'a', ['192.0.2.1']), lb('tenant-b', 'b', ['192.0.2.1'])]));
    expect(plan).toEqual({ ok: false, refusals: ['tenant-b/b: 192.0.2.1 is held by tenant-a/a too; MetalLB shares it (allow-shared-ip), and adoption makes one claim per Service, never a Shared claim for several (docs/adoption.md)'] });
  });
});

describe('planUndo', () => {
  const before = { annotations: { [IP_ADDRESS_CLAIM_ANNOTATION]: null, [PIN_ANNOTATION]: 'x', [PINNED_ANNOTATION]: null }, labels: { [CARRIER_LABEL]: null } };
  const adopted = (ip: string, from: string, to = from): IPAddress => {
    const [namespace, name] = from.split('/') as [string, string];
    const [toNs, toName] = to.split('/') as [string, string];
    return {
      apiVersion: API_VERSION,
      kind: 'IPAddress',
      metadata: { name: ipObjectName(ip), labels: marked.labels, annotations: { [ADOPTED_FROM_ANNOTATION]: from, [SERVICE_BEFORE_ANNOTATION]: JSON.stringify(before) } },
      spec: { className: 'legacy', address: ip, claimRef: { namespace, name }, source: {} },
      status: { associatedTo: { kind: 'Service', namespace: toNs, name: toName } },
    };
  };
  const naming = (claim: string) => lb('x', 'y', [], { annotations: { [IP_ADDRESS_CLAIM_ANNOTATION]: claim } });

  it('restores the recorded Service, strips a Service the claim moved to, leaves one the tenant re-pointed, and deletes what adoption made', () => {
    const services: Record<string, V1Service> = { 'tenant-a/web': naming('web'), 'tenant-a/new': naming('api'), 'tenant-a/api': naming('own-claim') };
    const plan = planUndo({
      className: 'legacy',
      ipClass: adoptionClass('legacy', 'legacy'),
      addresses: [adopted('192.0.2.1', 'tenant-a/web'), adopted('192.0.2.2', 'tenant-a/api', 'tenant-a/new')],
      service: (namespace, name) => services[`${namespace}/${name}`],
    });
    expect(plan).toEqual({
      ok: true,
      deleteClass: true,
      restores: [
        { namespace: 'tenant-a', name: 'web', before },
        { namespace: 'tenant-a', name: 'new', before: NO_KEYS },
      ],
      claims: [
        { namespace: 'tenant-a', name: 'web' },
        { namespace: 'tenant-a', name: 'api' },
      ],
      addresses: ['ip-192-0-2-1', 'ip-192-0-2-2'],
    });
  });

  it('refuses while the class holds an address adoption did not make, or when the class is not adoption’s', () => {
    const foreign: IPAddress = { apiVersion: API_VERSION, kind: 'IPAddress', metadata: { name: 'ip-192-0-2-9' }, spec: { className: 'legacy', address: '192.0.2.9', source: {} } };
    expect(planUndo({ className: 'legacy', ipClass: adoptionClass('legacy', 'legacy'), addresses: [foreign], service: () => undefined })).toEqual({
      ok: false,
      refusals: ['IPAddressClass legacy holds 1 address adoption did not make (ip-192-0-2-9); release them first'],
    });
    const plain: IPAddressClass = { apiVersion: API_VERSION, kind: 'IPAddressClass', metadata: { name: 'legacy' }, spec: { provisioner: METALLB_PROVISIONER } };
    expect(planUndo({ className: 'legacy', ipClass: plain, addresses: [], service: () => undefined }).ok).toBe(false);
  });
});

describe('restoredKeys', () => {
  it('puts recorded values back, removes null ones, keeps every other key, and says null when nothing differs', () => {
    const service = lb('tenant-a', 'web', ['192.0.2.7'], {
      annotations: { [IP_ADDRESS_CLAIM_ANNOTATION]: 'web', [PIN_ANNOTATION]: '192.0.2.7', [PINNED_ANNOTATION]: 'true', keep: 'me' },
      labels: { [CARRIER_LABEL]: 'true', app: 'web' },
    });
    const before = { annotations: { [IP_ADDRESS_CLAIM_ANNOTATION]: null, [PIN_ANNOTATION]: '192.0.2.7', [PINNED_ANNOTATION]: null }, labels: { [CARRIER_LABEL]: null } };
    const restored = restoredKeys(service, before)!;
    expect(restored.metadata!.annotations).toEqual({ [PIN_ANNOTATION]: '192.0.2.7', keep: 'me' });
    expect(restored.metadata!.labels).toEqual({ app: 'web' });
    expect(restoredKeys(restored, before)).toBeNull();
  });
});
