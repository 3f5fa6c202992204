import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaderElector } from '../../../controllers/runtime/leader.js';
import { silentLogger } from '../../../controllers/runtime/log.js';
import { FakeApiserver } from '../../support/fake-apiserver.js';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/ns/leases';
const LEASE = `${LEASES}/lock`;
type Lease = { metadata: { name: string; resourceVersion?: string }; spec: { holderIdentity?: string; leaseTransitions?: number; leaseDurationSeconds?: number } };

let server: FakeApiserver;
const electors: LeaderElector[] = [];
beforeEach(async () => {
  server = await FakeApiserver.start();
});
afterEach(async () => {
  for (const e of electors.splice(0)) await e.release();
  await server.stop();
});

// Short periods keep the test fast; the algorithm is the same at 15 s / 10 s / 2 s.
const elector = (identity: string, leaseDurationMs = 1_000) => {
  const e = new LeaderElector({
    kubeConfig: server.kubeConfig(),
    namespace: 'ns',
    name: 'lock',
    identity,
    log: silentLogger,
    leaseDurationMs,
    renewDeadlineMs: leaseDurationMs * 0.6,
    retryPeriodMs: 50,
  });
  electors.push(e);
  return e;
};
const lease = () => server.objects.get(LEASE) as Lease | undefined;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('LeaderElector', () => {
  it('creates the Lease when there is none and leads', async () => {
    const a = elector('a');
    await a.run(() => {});
    expect(a.isLeader).toBe(true);
    expect(lease()!.spec.holderIdentity).toBe('a');
  });

  it('a second candidate waits while the holder renews, and takes over only after release', async () => {
    // A 2 s lease: under a loaded test run, a 1 s one could lapse between two of a's renewals.
    const a = elector('a', 2_000);
    await a.run(() => {});
    const b = elector('b', 2_000);
    let bLeads = false;
    void b.run(() => {}).then(() => (bLeads = true));
    await sleep(2_500); // longer than the lease duration: a kept renewing, so b must not lead
    expect(bLeads).toBe(false);
    expect(lease()!.spec.holderIdentity).toBe('a');
    await a.release();
    expect(lease()!.spec.holderIdentity).toBeUndefined();
    // The released Lease lasts its duration as observed by b, then b acquires it (one transition).
    const deadline = Date.now() + 8_000;
    while (!bLeads && Date.now() < deadline) await sleep(20);
    expect(bLeads).toBe(true);
    expect(lease()!.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('release waits for a renewal in flight, so the Lease is handed back, not left held', async () => {
    const a = elector('a', 2_000);
    await a.run(() => {});
    const writes = () => server.requests.filter((r) => r.method === 'PUT').length;
    const before = writes();
    const resume = server.holdWrites();
    while (writes() === before) await sleep(5); // a's next renewal is now in flight, held
    const released = a.release();
    await sleep(100); // a release that does not wait reads the Lease now, and its write queues behind the renewal
    resume();
    await released;
    expect(lease()!.spec.holderIdentity).toBeUndefined();
    expect(a.isLeader).toBe(false);
  });

  it('takes over a Lease whose holder stopped renewing, judged by its own observation', async () => {
    server.objects.set(LEASE, {
      metadata: { name: 'lock', resourceVersion: server.nextRevision() },
      spec: { holderIdentity: 'gone', leaseDurationSeconds: 1, leaseTransitions: 3 },
    } as Lease);
    const b = elector('b');
    const began = Date.now();
    await b.run(() => {});
    expect(Date.now() - began).toBeGreaterThanOrEqual(900);
    expect(lease()!.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 4 });
  });

  it('stops leading when it cannot renew within the renew deadline', async () => {
    let lost = false;
    const c = elector('c');
    await c.run(() => (lost = true));
    // Another writer takes the Lease: every renewal now sees a live foreign holder.
    const stolen = lease()!;
    stolen.spec.holderIdentity = 'thief';
    stolen.spec.leaseDurationSeconds = 60;
    stolen.metadata.resourceVersion = server.nextRevision();
    const deadline = Date.now() + 5_000;
    while (!lost && Date.now() < deadline) await sleep(20);
    expect(lost).toBe(true);
    expect(c.isLeader).toBe(false);
  });
});
