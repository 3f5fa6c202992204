/**
 * The core controller, run from its entrypoint with the chart's own RBAC
 * (as the address-controller ServiceAccount), against a real API server.
 */
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installAsOperator, replicateCozystackValues } from './support/operator.js';
import { synthesizedArtifact } from '../support/synth.js';
import { ADMIN, startCluster, type Cluster } from './support/cluster.js';
import { startController, type ControllerProcess } from './support/controller-process.js';
import { apis, GROUP, VERSION } from './support/kube.js';
import { waitFor } from './support/ports.js';
import { scenarioTest } from './support/summary.js';

const scenario = scenarioTest(it);

const NAMESPACE = 'cozy-address-controller';
const SA = `system:serviceaccount:${NAMESPACE}:address-controller`;
const LEASE = 'a4cfeeab.sdn.cozystack.io';

let cluster: Cluster;
let admin: ReturnType<typeof apis>;
const controllers: ControllerProcess[] = [];

type Obj = { metadata: k8s.V1ObjectMeta; spec: Record<string, any>; status?: Record<string, any> }; // any: CR JSON

const custom = () => admin.custom;
const getAddress = async (name: string) => (await custom().getClusterCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddresses', name })) as Obj;
const getClaim = async (name: string) => (await custom().getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddressclaims', namespace: 'tenant-a', name })) as Obj;
const createClaim = (name: string) =>
  custom().createNamespacedCustomObject({
    group: GROUP, version: VERSION, plural: 'ipaddressclaims', namespace: 'tenant-a',
    body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddressClaim', metadata: { name, namespace: 'tenant-a' }, spec: { className: 'public' } },
  });
const lease = () => admin.objects.read({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: LEASE, namespace: NAMESPACE } }) as Promise<k8s.V1Lease>;

beforeAll(async () => {
  cluster = await startCluster({ users: [{ name: SA, groups: ['system:serviceaccounts', `system:serviceaccounts:${NAMESPACE}`] }] });
  admin = apis(cluster.client(ADMIN));
  for (const name of [NAMESPACE, 'tenant-a']) {
    await admin.core.createNamespace({ body: { metadata: { name } } });
  }
  await replicateCozystackValues(admin.core, NAMESPACE);
  await installAsOperator(admin.core, cluster.kubeconfig(), {
    release: 'address-controller',
    namespace: NAMESPACE,
    chartDir: join(synthesizedArtifact(), 'packages', 'system', 'address-controller'),
  });
  await custom().createClusterCustomObject({
    group: GROUP, version: VERSION, plural: 'ipaddressclasses',
    body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddressClass', metadata: { name: 'public' }, spec: { provisioner: 'metallb.drivers.local.sdn.cozystack.io' } },
  });
  await custom().createClusterCustomObject({
    group: GROUP, version: VERSION, plural: 'ipaddresses',
    body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddress', metadata: { name: 'ip-203-0-113-7' }, spec: { className: 'public', address: '203.0.113.7', source: { fromClass: {} } } },
  });
  controllers.push(await startController('address-controller', cluster.kubeconfig(SA), cluster.dir, ['--leader-elect', `--leader-election-namespace=${NAMESPACE}`]));
}, 600_000);

afterAll(async () => {
  for (const c of controllers) {
    await c.process.stop();
  }
  await cluster?.stop();
});

describe('address-controller against a real API server', () => {
  scenario('takes the Lease, becomes ready and serves metrics', async () => {
    const [c] = controllers;
    await waitFor('the Lease', async () => (await lease()).spec?.holderIdentity === c!.identity, 30_000);
    await waitFor('/readyz', async () => (await c!.get('/readyz')).status === 200);
    await waitFor('reconcile metrics', async () => (await c!.get('/metrics')).body.includes('controller_runtime_reconcile_total{controller="ipaddress"'));
  });

  scenario('makes a static address Available and binds a claim to it', async () => {
    await waitFor('Available', async () => (await getAddress('ip-203-0-113-7')).status?.phase === 'Available');
    await createClaim('web');
    await waitFor('claim Bound', async () => (await getClaim('web')).status?.phase === 'Bound');
    const claim = await getClaim('web');
    expect(claim.status?.addresses).toEqual([{ name: 'ip-203-0-113-7', address: '203.0.113.7' }]);
    expect(claim.metadata.annotations?.['local.sdn.cozystack.io/provisioner']).toBe('metallb.drivers.local.sdn.cozystack.io');
    await waitFor('address Bound', async () => (await getAddress('ip-203-0-113-7')).status?.phase === 'Bound');
    expect((await getAddress('ip-203-0-113-7')).spec.claimRef).toEqual({ namespace: 'tenant-a', name: 'web', uid: claim.metadata.uid });
    const events = await admin.core.listNamespacedEvent({ namespace: 'tenant-a' });
    const reasons = events.items.map((e) => e.reason);
    expect(reasons).toContain('Matched');
    expect(reasons).not.toContain('Bound'); // Matched says the binding; a second Event would cost a write per claim
  });

  scenario('blocks deleting a Bound address, releases it under Retain, and recycles it once an admin clears the claimRef', async () => {
    await custom().deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddresses', name: 'ip-203-0-113-7' });
    await new Promise((r) => setTimeout(r, 1000));
    const blocked = await getAddress('ip-203-0-113-7');
    expect(blocked.metadata.deletionTimestamp).toBeDefined();
    expect(blocked.metadata.finalizers).toContain('local.sdn.cozystack.io/address-protection');
    // Deleting the claim releases the address; its own pending deletion then completes.
    await custom().deleteNamespacedCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddressclaims', namespace: 'tenant-a', name: 'web' });
    await waitFor('claim gone', async () => {
      try {
        await getClaim('web');
        return false;
      } catch (error) {
        return (error as k8s.ApiException<unknown>).code === 404;
      }
    });
    await waitFor('address gone', async () => {
      try {
        await getAddress('ip-203-0-113-7');
        return false;
      } catch (error) {
        return (error as k8s.ApiException<unknown>).code === 404;
      }
    });

    await custom().createClusterCustomObject({
      group: GROUP, version: VERSION, plural: 'ipaddresses',
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddress', metadata: { name: 'ip-203-0-113-8' }, spec: { className: 'public', address: '203.0.113.8', source: { fromClass: {} } } },
    });
    await createClaim('api');
    await waitFor('api Bound', async () => (await getClaim('api')).status?.phase === 'Bound');
    await custom().deleteNamespacedCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddressclaims', namespace: 'tenant-a', name: 'api' });
    await waitFor('Released', async () => (await getAddress('ip-203-0-113-8')).status?.phase === 'Released');
    const released = await getAddress('ip-203-0-113-8');
    expect(released.spec.claimRef?.name).toBe('api');
    delete released.spec.claimRef;
    await custom().replaceClusterCustomObject({ group: GROUP, version: VERSION, plural: 'ipaddresses', name: 'ip-203-0-113-8', body: released });
    await waitFor('Available again', async () => (await getAddress('ip-203-0-113-8')).status?.phase === 'Available');
    await createClaim('next');
    await waitFor('next Bound', async () => (await getClaim('next')).status?.phase === 'Bound');
    expect((await getClaim('next')).status?.addresses).toEqual([{ name: 'ip-203-0-113-8', address: '203.0.113.8' }]);
  });

  scenario('reuses its TLS connections: every request after the first few rides a kept-alive one', async () => {
    const metric = (body: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(body)?.[1] ?? NaN);
    const before = (await controllers[0]!.get('/metrics')).body;
    for (let i = 0; i < 10; i++) {
      // Each costs the controller a metadata and a status write; a class of their own, so they
      // never compete with the other scenarios' claims for an address.
      await custom().createNamespacedCustomObject({
        group: GROUP, version: VERSION, plural: 'ipaddressclaims', namespace: 'tenant-a',
        body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddressClaim', metadata: { name: `reuse-${i}`, namespace: 'tenant-a' }, spec: { className: 'reuse' } },
      });
    }
    await waitFor('reuse claims Pending', async () => (await getClaim('reuse-9')).status?.phase === 'Pending');
    await new Promise((r) => setTimeout(r, 500));
    const after = (await controllers[0]!.get('/metrics')).body;
    const passes = metric(after, 'controller_runtime_reconcile_total{controller="ipaddressclaim",result="success"}');
    expect(passes - metric(before, 'controller_runtime_reconcile_total{controller="ipaddressclaim",result="success"}')).toBeGreaterThanOrEqual(10);
    // Watches hold a connection each; requests share the rest. Before the shared pool: one handshake per request.
    const handshakes = metric(after, 'rest_client_tls_handshakes_total');
    expect(handshakes).toBeGreaterThan(0);
    expect(handshakes - metric(before, 'rest_client_tls_handshakes_total')).toBeLessThanOrEqual(4);
    expect(metric(after, 'rest_client_connections_open')).toBeLessThanOrEqual(metric(after, 'rest_client_connections_total'));
  });

  scenario('a second replica waits; on SIGTERM the leader releases the Lease and the standby takes over', async () => {
    const standby = await startController('address-controller', cluster.kubeconfig(SA), cluster.dir, ['--leader-elect', `--leader-election-namespace=${NAMESPACE}`], 'address-controller-b');
    controllers.push(standby);
    await new Promise((r) => setTimeout(r, 3000));
    expect((await lease()).spec?.holderIdentity).toMatch(/^address-controller_[0-9a-f-]{36}$/);
    expect((await standby.get('/metrics')).body).not.toMatch(/leader_election_master_status\{[^}]*\} 1/);

    const leader = controllers[0]!;
    const exited = new Promise<number | null>((resolve) => leader.process.process.once('exit', (code) => resolve(code)));
    leader.process.process.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(leader.process.tail(50)).toContain('released the lease');
    // Released, not expired: the standby takes it within a retry period or two, not a lease duration.
    await waitFor('standby leads', async () => (await lease()).spec?.holderIdentity?.startsWith('address-controller-b_') ?? false, 10_000);
    await custom().createClusterCustomObject({
      group: GROUP, version: VERSION, plural: 'ipaddresses',
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddress', metadata: { name: 'ip-203-0-113-9' }, spec: { className: 'public', address: '203.0.113.9', source: { fromClass: {} } } },
    });
    await createClaim('after-failover');
    await waitFor('bound by the new leader', async () => (await getClaim('after-failover')).status?.phase === 'Bound');
  });
});
