/**
 * Faults, each ending with every address accounted for: kill -9 of either
 * controller mid-reservation and mid-handoff, two replicas with Lease
 * failover, a kube-apiserver restart, and watches resumed after etcd
 * compaction (410 Gone → relist).
 */
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControllerProcess } from './support/controller-process.js';
import { waitFor } from './support/ports.js';
import { createClaim, createClass, crd, expectAccounted, type Cr, type Platform, startPlatform } from './support/platform.js';
import { recordFault, recordScenario } from './support/summary.js';

let platform: Platform;
const replicas: Record<'core' | 'driver', ControllerProcess[]> = { core: [], driver: [] };
let generation = 0;

const claimPhase = async (name: string) =>
  ((await platform.admin.custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: 'tenant-a', name })) as Cr).status?.phase;
const allBound = async (names: string[]) => (await Promise.all(names.map(claimPhase))).every((p) => p === 'Bound');
const leaseHolder = async (namespace: string, name: string) =>
  ((await platform.admin.objects.read({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace } })) as k8s.V1Lease).spec?.holderIdentity ?? '';
const LEASES = { core: ['cozy-address-controller', 'a4cfeeab.sdn.cozystack.io'], driver: ['cozy-metallb-iad', 'e1633266.iad.cozystack.io'] } as const;

async function leaderOf(kind: 'core' | 'driver'): Promise<ControllerProcess> {
  let leader: ControllerProcess | undefined;
  await waitFor(`${kind} leader`, async () => {
    const holder = await leaseHolder(LEASES[kind][0], LEASES[kind][1]);
    leader = replicas[kind].find((r) => holder === r.identity);
    return Boolean(leader);
  }, 30_000);
  return leader!;
}

async function killLeader(kind: 'core' | 'driver'): Promise<void> {
  const leader = await leaderOf(kind);
  leader.process.process.kill('SIGKILL');
  await new Promise((r) => leader.process.process.once('exit', r));
  replicas[kind] = replicas[kind].filter((r) => r !== leader);
}

async function addReplica(kind: 'core' | 'driver'): Promise<void> {
  const name = `${kind === 'core' ? 'address-controller' : 'metallb-iad'}-${++generation}`;
  replicas[kind].push(await (kind === 'core' ? platform.startCore(name, true) : platform.startDriver(name, true)));
}

beforeAll(async () => {
  platform = await startPlatform();
  await createClass(platform.admin, 'public', ['203.0.113.0/26']);
  for (const kind of ['core', 'driver', 'core', 'driver'] as const) {
    await addReplica(kind);
  }
}, 600_000);

afterAll(async () => {
  await platform?.stop();
});

describe('faults', () => {
  it('two replicas of each controller: exactly one leads each Lease', async () => {
    for (const kind of ['core', 'driver'] as const) {
      const holder = await leaseHolder(LEASES[kind][0], LEASES[kind][1]);
      expect(replicas[kind].filter((r) => holder === r.identity)).toHaveLength(1);
    }
    await createClaim(platform.admin, 'warmup');
    await waitFor('warmup Bound', () => allBound(['warmup']), 60_000);
    recordScenario('two replicas, one leader each');
  });

  it('kill -9 of the driver leader mid-reservation: the standby takes over within the lease, nothing is allocated twice', async () => {
    const names = ['r1', 'r2', 'r3', 'r4'];
    await Promise.all(names.map((n) => createClaim(platform.admin, n)));
    await new Promise((r) => setTimeout(r, 300));
    const killedAt = Date.now();
    await killLeader('driver');
    recordFault('kill -9 driver leader mid-reservation');
    await leaderOf('driver'); // the standby, once the Lease it can no longer see renewed expires
    expect(Date.now() - killedAt).toBeLessThan(30_000);
    await addReplica('driver');
    await waitFor('all Bound', () => allBound(names), 90_000);
    await expectAccounted(platform.admin);
  });

  it('kill -9 of the core leader mid-binding, then a restart', async () => {
    const names = ['b1', 'b2', 'b3'];
    await Promise.all(names.map((n) => createClaim(platform.admin, n)));
    await new Promise((r) => setTimeout(r, 500));
    await killLeader('core');
    recordFault('kill -9 core leader mid-binding');
    await addReplica('core');
    await waitFor('all Bound', () => allBound(names), 90_000);
    await expectAccounted(platform.admin);
  });

  it('kill -9 of the driver leader mid-handoff: every Service ends with its claim’s IP', async () => {
    const names = ['r1', 'r2', 'r3'];
    for (const n of names) {
      await platform.admin.core.createNamespacedService({
        namespace: 'tenant-a',
        body: { metadata: { name: `svc-${n}`, annotations: { 'local.sdn.cozystack.io/ip-address-claim': n } }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } },
      });
    }
    await new Promise((r) => setTimeout(r, 200));
    await killLeader('driver');
    recordFault('kill -9 driver leader mid-handoff');
    await addReplica('driver');
    for (const n of names) {
      await waitFor(`svc-${n} has its IP`, async () => {
        const claim = (await platform.admin.custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: 'tenant-a', name: n })) as Cr;
        const ip = claim.status?.addresses?.[0]?.address;
        const svc = await platform.admin.core.readNamespacedService({ name: `svc-${n}`, namespace: 'tenant-a' });
        return Boolean(ip) && (svc.status?.loadBalancer?.ingress ?? []).some((i) => i.ip === ip);
      }, 90_000);
    }
    await expectAccounted(platform.admin);
    recordScenario('handoff completes after a crash');
  });

  it('a kube-apiserver restart mid-run', async () => {
    const names = ['a1', 'a2'];
    await Promise.all(names.map((n) => createClaim(platform.admin, n)));
    await platform.cluster.restartApiserver();
    recordFault('kube-apiserver restart');
    await waitFor('all Bound after the restart', () => allBound(names), 120_000);
    await expectAccounted(platform.admin);
  });

  it('watches resumed after etcd compaction get 410 Gone and relist', async () => {
    for (const r of [...replicas.core, ...replicas.driver]) {
      r.process.process.kill('SIGSTOP');
    }
    const names = ['g1', 'g2'];
    await Promise.all(names.map((n) => createClaim(platform.admin, n)));
    for (let i = 0; i < 5; i++) {
      await platform.admin.core.createNamespacedConfigMap({ namespace: 'tenant-b', body: { metadata: { name: `churn-${i}` }, data: { i: String(i) } } });
    }
    await platform.cluster.compactEtcd();
    await platform.cluster.restartApiserver(); // drops the watch cache: old resourceVersions are now too old
    for (const r of [...replicas.core, ...replicas.driver]) {
      r.process.process.kill('SIGCONT');
    }
    recordFault('etcd compaction + paused controllers (410 Gone)');
    // A leader paused past its renew deadline steps down and exits, as controller-runtime does; replace it.
    await new Promise((r) => setTimeout(r, 3000));
    for (const kind of ['core', 'driver'] as const) {
      replicas[kind] = replicas[kind].filter((r) => r.process.process.exitCode === null);
      while (replicas[kind].length < 2) {
        await addReplica(kind);
      }
    }
    await waitFor('all Bound after 410', () => allBound(names), 120_000);
    await expectAccounted(platform.admin);
    const logs = [...replicas.core, ...replicas.driver].map((r) => r.process.tail(400)).join('\n');
    expect(logs).toMatch(/410 Gone\); relisting/);
  }, 300_000); // the waits inside add up to more than the default test timeout on a loaded machine
});
