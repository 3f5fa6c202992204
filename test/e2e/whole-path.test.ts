/**
 * The whole path on a real control plane with MetalLB's real controller:
 * class → pool; claim → placeholder → MetalLB assigns → IPAddress → Bound;
 * tenant Service → pinned, MetalLB gives it that IP; theft refused; Service
 * gone → held again, same IP for the next Service; Retain → Released, still
 * held → recycled by addressName; Delete → teardown; Lost and back.
 */
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cluster } from './support/cluster.js';
import type { ControllerProcess } from './support/controller-process.js';
import { apis, expectRejected, GROUP, VERSION } from './support/kube.js';
import { createClaim as createClaimIn, crd, holdsOf, PLACEHOLDERS, startPlatform, type Cr, type Platform } from './support/platform.js';
import { waitFor } from './support/ports.js';
import { recordScenario } from './support/summary.js';

const TENANT_B = 'bob'; // tenant-b admin

let platform: Platform;
let cluster: Cluster;
let admin: ReturnType<typeof apis>;
let driver: ControllerProcess;

const getAddress = async (name: string) => (await admin.custom.getClusterCustomObject({ ...crd('ipaddresses'), name })) as Cr;
const getClaim = async (name: string, namespace = 'tenant-a') => (await admin.custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace, name })) as Cr;
const exists = async (read: () => Promise<unknown>) => {
  try {
    await read();
    return true;
  } catch (error) {
    if ((error as k8s.ApiException<unknown>).code === 404) {
      return false;
    }
    throw error;
  }
};
const createClaim = (name: string, spec: Record<string, unknown> = { className: 'public' }) => createClaimIn(admin, name, spec);
const deleteClaim = (name: string) => admin.custom.deleteNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: 'tenant-a', name });
const tenantService = (name: string, claim?: string, namespace = 'tenant-a'): k8s.V1Service => ({
  metadata: { name, namespace, annotations: claim ? { 'local.sdn.cozystack.io/ip-address-claim': claim } : undefined },
  spec: { type: 'LoadBalancer', ports: [{ port: 80 }] },
});
const ingress = async (name: string, namespace = 'tenant-a') =>
  (await admin.core.readNamespacedService({ name, namespace })).status?.loadBalancer?.ingress?.map((i) => i.ip) ?? [];
const placeholdersOf = (addressName: string) => holdsOf(admin, addressName);
const boundAddressOf = async (claim: string) => {
  await waitFor(`claim ${claim} Bound`, async () => (await getClaim(claim)).status?.phase === 'Bound', 60_000);
  return (await getClaim(claim)).status!.addresses[0] as { name: string; address: string };
};

beforeAll(async () => {
  platform = await startPlatform([{ name: TENANT_B, groups: ['tenant-b-admin'] }]);
  ({ cluster, admin } = platform);
  // tenant-b may manage its own Services (as cozy:tenant:admin:base allows).
  await admin.rbac.createNamespacedRole({ namespace: 'tenant-b', body: { metadata: { name: 'services' }, rules: [{ apiGroups: [''], resources: ['services'], verbs: ['*'] }] } });
  await admin.rbac.createNamespacedRoleBinding({
    namespace: 'tenant-b',
    body: { metadata: { name: 'services' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'services' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'tenant-b-admin' }] },
  });
  await platform.startCore('address-controller');
  driver = await platform.startDriver('metallb-iad');
  await admin.custom.createClusterCustomObject({
    ...crd('ipaddressclasses'),
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'IPAddressClass',
      metadata: { name: 'public', annotations: { 'ipaddressclass.local.sdn.cozystack.io/is-default-class': 'true' } },
      spec: { provisioner: 'metallb.drivers.local.sdn.cozystack.io', reclaimPolicy: 'Retain', parameters: { addresses: ['203.0.113.0/28'] } },
    },
  });
}, 600_000);

afterAll(async () => {
  await platform?.stop();
});

describe('the whole path', () => {
  let ip: string;
  let addressName: string;

  it('renders an IPAddressPool (autoAssign false) and L2Advertisement for the class', async () => {
    await waitFor('pool', () => exists(() => admin.custom.getNamespacedCustomObject({ group: 'metallb.io', version: 'v1beta1', namespace: 'cozy-metallb', plural: 'ipaddresspools', name: 'iad-public' })), 30_000);
    const pool = (await admin.custom.getNamespacedCustomObject({ group: 'metallb.io', version: 'v1beta1', namespace: 'cozy-metallb', plural: 'ipaddresspools', name: 'iad-public' })) as Cr;
    expect(pool.spec).toMatchObject({ addresses: ['203.0.113.0/28'], autoAssign: false });
    expect(pool.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'IPAddressClass', name: 'public' });
    await waitFor('advertisement', () => exists(() => admin.custom.getNamespacedCustomObject({ group: 'metallb.io', version: 'v1beta1', namespace: 'cozy-metallb', plural: 'l2advertisements', name: 'iad-public' })));
    recordScenario('class → MetalLB pool and advertisement');
  });

  it('a claim is reserved through a placeholder MetalLB assigns, recorded as an IPAddress, and Bound', async () => {
    await createClaim('web');
    const bound = await boundAddressOf('web');
    ip = bound.address;
    addressName = bound.name;
    expect(ip).toMatch(/^203\.0\.113\.(\d|1[0-5])$/);
    const address = await getAddress(addressName);
    expect(address.spec).toMatchObject({ className: 'public', address: ip, reclaimPolicy: 'Retain', source: { fromClass: {} } });
    expect(address.metadata.finalizers).toEqual(expect.arrayContaining(['metallb.drivers.local.sdn.cozystack.io/teardown', 'local.sdn.cozystack.io/address-protection']));
    await waitFor('address Bound', async () => (await getAddress(addressName)).status?.phase === 'Bound');
    const [placeholder] = await placeholdersOf(addressName);
    expect(placeholder?.metadata?.annotations?.['metallb.io/loadBalancerIPs']).toBe(ip);
    expect(placeholder?.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'IPAddress', name: addressName });
    recordScenario('claim → placeholder → MetalLB → IPAddress → Bound');
  });

  it('a tenant Service naming the claim is pinned, and MetalLB gives it that IP', async () => {
    await admin.core.createNamespacedService({ namespace: 'tenant-a', body: tenantService('web', 'web') });
    await waitFor('Service has the IP', async () => (await ingress('web')).includes(ip), 60_000);
    const service = await admin.core.readNamespacedService({ name: 'web', namespace: 'tenant-a' });
    expect(service.metadata?.annotations).toMatchObject({ 'metallb.io/loadBalancerIPs': ip, 'metallb.drivers.local.sdn.cozystack.io/pinned': 'true' });
    expect((await getAddress(addressName)).status?.associatedTo).toEqual({ kind: 'Service', namespace: 'tenant-a', name: 'web' });
    expect(await placeholdersOf(addressName)).toEqual([]);
    recordScenario('tenant Service → pinned, MetalLB assigns it');
  });

  it('another tenant cannot take the IP: the fence refuses the pin', async () => {
    const bob = apis(cluster.client(TENANT_B));
    const thief = tenantService('thief', undefined, 'tenant-b');
    thief.metadata!.annotations = { 'metallb.io/loadBalancerIPs': ip };
    await expectRejected(bob.core.createNamespacedService({ namespace: 'tenant-b', body: thief }), 403, 'metallb.io/loadBalancerIPs');
    recordScenario('theft by a tenant refused by admission');
  });

  it('a second Service naming the same claim is refused while the first lives', async () => {
    await admin.core.createNamespacedService({ namespace: 'tenant-a', body: tenantService('web2', 'web') });
    await waitFor('AssociationRejected', async () => {
      const events = await admin.core.listNamespacedEvent({ namespace: 'tenant-a', fieldSelector: 'involvedObject.name=web2' });
      return events.items.some((e) => e.reason === 'AssociationRejected');
    });
    expect((await admin.core.readNamespacedService({ name: 'web2', namespace: 'tenant-a' })).metadata?.annotations?.['metallb.io/loadBalancerIPs']).toBeUndefined();
    await admin.core.deleteNamespacedService({ name: 'web2', namespace: 'tenant-a' });
    recordScenario('one claim serves one workload');
  });

  it('deleting the Service holds the address again; the next Service gets the same IP', async () => {
    await admin.core.deleteNamespacedService({ name: 'web', namespace: 'tenant-a' });
    await waitFor('held again', async () => (await placeholdersOf(addressName)).length === 1, 60_000);
    await waitFor('associatedTo cleared', async () => !(await getAddress(addressName)).status?.associatedTo);
    expect((await getAddress(addressName)).status?.phase).toBe('Bound');
    await admin.core.createNamespacedService({ namespace: 'tenant-a', body: tenantService('web-v2', 'web') });
    await waitFor('same IP for the next Service', async () => (await ingress('web-v2')).includes(ip), 60_000);
    await admin.core.deleteNamespacedService({ name: 'web-v2', namespace: 'tenant-a' });
    await waitFor('held again', async () => (await placeholdersOf(addressName)).length === 1, 60_000);
    recordScenario('Service deleted → held → same IP again');
  });

  it('under Retain, deleting the claim leaves the address Released and still held; an admin recycles it', async () => {
    await deleteClaim('web');
    await waitFor('Released', async () => (await getAddress(addressName)).status?.phase === 'Released', 60_000);
    expect((await placeholdersOf(addressName)).length).toBe(1);
    const released = await getAddress(addressName);
    delete released.spec.claimRef;
    await admin.custom.replaceClusterCustomObject({ ...crd('ipaddresses'), name: addressName, body: released });
    await waitFor('Available', async () => (await getAddress(addressName)).status?.phase === 'Available', 30_000);
    expect((await placeholdersOf(addressName)).length).toBe(1);
    await createClaim('web-again', { className: 'public', addressName });
    const again = await boundAddressOf('web-again');
    expect(again).toEqual({ name: addressName, address: ip });
    recordScenario('Retain → Released → Available → re-bound');
  });

  it('a claim on a class with an Available address binds that address, and nothing is reserved besides', async () => {
    await admin.custom.createClusterCustomObject({
      ...crd('ipaddresses'),
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddress', metadata: { name: 'ip-203-0-113-14' }, spec: { className: 'public', address: '203.0.113.14', source: { fromClass: {} } } },
    });
    await waitFor('static address Available', async () => (await getAddress('ip-203-0-113-14')).status?.phase === 'Available', 30_000);
    await createClaim('recycle');
    expect(await boundAddressOf('recycle')).toEqual({ name: 'ip-203-0-113-14', address: '203.0.113.14' });
    await new Promise((r) => setTimeout(r, 2000));
    const list = (await admin.custom.listClusterCustomObject(crd('ipaddresses'))) as { items: Cr[] };
    expect(list.items.filter((a) => a.spec.claimRef?.name === 'recycle')).toHaveLength(1);
    const allocations = (await admin.core.listNamespacedService({ namespace: PLACEHOLDERS })).items.filter(
      (s) => s.metadata?.annotations?.['metallb.drivers.local.sdn.cozystack.io/claim-name'] === 'recycle',
    );
    expect(allocations).toEqual([]);
    await deleteClaim('recycle');
    recordScenario('Available address matched before any reservation');
  });

  it('the backing reservation leaving the pool is Lost, and recovers when it returns', async () => {
    const ipClass = (await admin.custom.getClusterCustomObject({ ...crd('ipaddressclasses'), name: 'public' })) as Cr;
    const other = ipClass.spec.parameters.addresses;
    ipClass.spec.parameters = { addresses: ['198.51.100.0/28'] };
    await admin.custom.replaceClusterCustomObject({ ...crd('ipaddressclasses'), name: 'public', body: ipClass });
    await waitFor('Lost', async () => (await getAddress(addressName)).status?.phase === 'Lost', 60_000);
    await waitFor('claim Lost', async () => (await getClaim('web-again')).status?.phase === 'Lost', 30_000);
    const back = (await admin.custom.getClusterCustomObject({ ...crd('ipaddressclasses'), name: 'public' })) as Cr;
    back.spec.parameters = { addresses: other };
    await admin.custom.replaceClusterCustomObject({ ...crd('ipaddressclasses'), name: 'public', body: back });
    await waitFor('address Bound again', async () => (await getAddress(addressName)).status?.phase === 'Bound', 60_000);
    await waitFor('claim Bound again', async () => (await getClaim('web-again')).status?.phase === 'Bound', 30_000);
    recordScenario('Lost on pool change, recovered');
  });

  it('an admin-made offender on a bound IP: a plain pin gets nothing from the class pool; one with the carrier label puts the address in Conflict, cleared when it goes', async () => {
    // The offender can only get the IP while nothing holds it: stop the driver, drop the hold, pin a Service to it.
    driver.process.process.kill('SIGKILL');
    await new Promise((r) => driver.process.process.once('exit', r));
    for (const placeholder of await placeholdersOf(addressName)) {
      await admin.core.deleteNamespacedService({ name: placeholder.metadata!.name!, namespace: PLACEHOLDERS });
    }
    // A pin without the driver's carrier label: the class pool admits no such Service, and MetalLB says why on it.
    const plain: k8s.V1Service = { metadata: { name: 'plain-pin', namespace: 'default', annotations: { 'metallb.io/loadBalancerIPs': ip } }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } };
    await admin.core.createNamespacedService({ namespace: 'default', body: plain });
    await waitFor('MetalLB refuses the plain pin', async () => {
      const events = await admin.core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=plain-pin' });
      return events.items.some((e) => e.reason === 'AllocationFailed' && /not compatible/.test(e.message ?? ''));
    }, 30_000);
    expect(await ingress('plain-pin', 'default')).toEqual([]);
    await admin.core.deleteNamespacedService({ name: 'plain-pin', namespace: 'default' });
    // An admin who copies the driver's label too (what admission cannot stop) gets the IP: reconciliation catches it.
    const offender: k8s.V1Service = {
      metadata: { name: 'offender', namespace: 'default', labels: { 'metallb.drivers.local.sdn.cozystack.io/carrier': 'true' }, annotations: { 'metallb.io/loadBalancerIPs': ip } },
      spec: { type: 'LoadBalancer', ports: [{ port: 80 }] },
    };
    await admin.core.createNamespacedService({ namespace: 'default', body: offender });
    await waitFor('MetalLB gives the offender the IP', async () => (await ingress('offender', 'default')).includes(ip), 30_000);
    driver = await platform.startDriver('metallb-iad-after-theft');
    await waitFor('Conflict', async () => (await getAddress(addressName)).status?.phase === 'Conflict', 60_000);
    // Events are written after the status, asynchronously.
    await waitFor('a Conflict event on the address', async () => {
      const events = await admin.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${addressName}` });
      return events.items.some((e) => e.reason === 'Conflict' && (e.message ?? '').includes('Service default/offender'));
    });
    expect((await getClaim('web-again')).status?.phase).toBe('Bound'); // Conflict is not Lost: the binding stands
    await admin.core.deleteNamespacedService({ name: 'offender', namespace: 'default' });
    await waitFor('Conflict cleared', async () => (await getAddress(addressName)).status?.phase === 'Bound', 60_000);
    await waitFor('held again by MetalLB', async () => {
      const [hold] = await placeholdersOf(addressName);
      return (hold?.status?.loadBalancer?.ingress ?? []).some((i) => i.ip === ip);
    }, 60_000);
    recordScenario('admin-made offender: a plain pin refused by MetalLB; a labelled one → Conflict → cleared');
  });

  it('an offender that moves to another IP instead of going: MetalLB is asked again for the hold, which gets its IP back', async () => {
    // MetalLB refused the hold while the offender had the IP, and looks again only when a Service is
    // deleted or lets go of every IP: a move to another IP is neither, so only the driver's retry
    // (the hold-retried-at annotation, 30 s after the hold was made) gets the hold its IP.
    driver.process.process.kill('SIGKILL');
    await new Promise((r) => driver.process.process.once('exit', r));
    for (const placeholder of await placeholdersOf(addressName)) {
      await admin.core.deleteNamespacedService({ name: placeholder.metadata!.name!, namespace: PLACEHOLDERS });
    }
    const offender: k8s.V1Service = {
      metadata: { name: 'mover', namespace: 'default', labels: { 'metallb.drivers.local.sdn.cozystack.io/carrier': 'true' }, annotations: { 'metallb.io/loadBalancerIPs': ip } },
      spec: { type: 'LoadBalancer', ports: [{ port: 80 }] },
    };
    await admin.core.createNamespacedService({ namespace: 'default', body: offender });
    await waitFor('MetalLB gives the mover the IP', async () => (await ingress('mover', 'default')).includes(ip), 30_000);
    driver = await platform.startDriver('metallb-iad-after-move');
    await waitFor('Conflict', async () => (await getAddress(addressName)).status?.phase === 'Conflict', 60_000);
    await waitFor('a hold made, without the IP', async () => (await placeholdersOf(addressName)).length === 1, 30_000);
    // Somewhere free in the pool (203.0.113.0/28): no IPAddress records it and no Service has it.
    const recorded = ((await admin.custom.listClusterCustomObject(crd('ipaddresses'))) as { items: Cr[] }).items.map((a) => a.spec.address as string);
    const carried = (await admin.core.listServiceForAllNamespaces()).items.flatMap((s) => (s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip));
    const elsewhere = [...Array(16).keys()].map((i) => `203.0.113.${15 - i}`).find((candidate) => !recorded.includes(candidate) && !carried.includes(candidate))!;
    const moving = await admin.core.readNamespacedService({ name: 'mover', namespace: 'default' });
    moving.metadata!.annotations = { ...moving.metadata!.annotations, 'metallb.io/loadBalancerIPs': elsewhere };
    await admin.core.replaceNamespacedService({ name: 'mover', namespace: 'default', body: moving });
    await waitFor('the mover moved', async () => (await ingress('mover', 'default')).join() === elsewhere, 30_000);
    await waitFor('Conflict cleared', async () => (await getAddress(addressName)).status?.phase === 'Bound', 60_000);
    await waitFor('held again by MetalLB', async () => {
      const [hold] = await placeholdersOf(addressName);
      return (hold?.status?.loadBalancer?.ingress ?? []).some((i) => i.ip === ip);
    }, 90_000);
    const [hold] = await placeholdersOf(addressName);
    expect(hold!.metadata?.annotations?.['metallb.drivers.local.sdn.cozystack.io/hold-retried-at']).toBeTruthy();
    await waitFor('a HoldRetried event on the address', async () => {
      const events = await admin.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${addressName}` });
      return events.items.some((e) => e.reason === 'HoldRetried' && (e.message ?? '').includes(ip));
    });
    await admin.core.deleteNamespacedService({ name: 'mover', namespace: 'default' });
    recordScenario('an offender moved to another IP: the hold asked again → held');
  });

  it('under Delete, deleting the claim tears down the placeholder and the IPAddress', async () => {
    await admin.custom.createClusterCustomObject({
      ...crd('ipaddressclasses'),
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddressClass', metadata: { name: 'ephemeral' }, spec: { provisioner: 'metallb.drivers.local.sdn.cozystack.io', reclaimPolicy: 'Delete', parameters: { addresses: ['198.51.100.16/28'] } } },
    });
    await createClaim('temp', { className: 'ephemeral' });
    const temp = await boundAddressOf('temp');
    expect((await placeholdersOf(temp.name)).length).toBe(1);
    await deleteClaim('temp');
    await waitFor('IPAddress gone', async () => !(await exists(() => getAddress(temp.name))), 60_000);
    await waitFor('placeholder gone', async () => (await placeholdersOf(temp.name)).length === 0, 30_000);
    // The class's MetalLB objects go with it (ownerReferences, garbage-collected).
    await admin.custom.deleteClusterCustomObject({ ...crd('ipaddressclasses'), name: 'ephemeral' });
    const pool = () => admin.custom.getNamespacedCustomObject({ group: 'metallb.io', version: 'v1beta1', namespace: 'cozy-metallb', plural: 'ipaddresspools', name: 'iad-ephemeral' });
    await waitFor('pool garbage-collected', async () => !(await exists(pool)), 60_000);
    recordScenario('Delete → teardown');
  });

  it('accounts for every address: none lost, none bound twice', async () => {
    const list = (await admin.custom.listClusterCustomObject(crd('ipaddresses'))) as { items: Cr[] };
    const ips = list.items.map((a) => a.spec.address);
    expect(new Set(ips).size).toBe(ips.length);
    const claims = new Map<string, number>();
    for (const a of list.items) {
      const ref = a.spec.claimRef;
      if (ref) {
        const key = `${ref.namespace}/${ref.name}`;
        claims.set(key, (claims.get(key) ?? 0) + 1);
      }
    }
    expect([...claims.values()].every((n) => n === 1)).toBe(true);
    recordScenario('ledger consistent', { addressesLost: list.items.filter((a) => a.status?.phase === 'Lost').length });
  });
});
