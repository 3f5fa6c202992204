/**
 * An EndpointAttachment-shaped consumer, played by the test as cozystack PR #4324's controller
 * does: it mints a claim (generateName, an ownerReference to its owner, blockOwnerDeletion as
 * controllers set it) and renders one additive LoadBalancer Service beside the application's
 * endpoint Service (externalTrafficPolicy: Local; selector and ports mirrored from the endpoint
 * Service; the claim annotation; spec.loadBalancerClass copied from the class's when it has one;
 * no ipFamilies), owned by the same owner. It reads what that controller reads: the claim's
 * status.className, status.addresses and first condition that is not True, and the address's
 * status.associatedTo.
 *
 * On the data path (test/e2e/support/lab/, three nodes), the endpoint sits on one node, chosen as
 * the one MetalLB's election would rank last for the address under externalTrafficPolicy:
 * Cluster: a client reaches the workload on the claim's address, and that node alone announces it.
 * Then the owner is deleted and kube-controller-manager's garbage collector deletes the claim (and
 * the Service): the core's finalizer runs the reclaim flow, and the address goes as the class's
 * policy says. Two runs: a Delete class (no load-balancer class; a single address, so a new claim
 * binding it again proves it reusable) and a Retain class declaring a load-balancer class (served
 * by a MetalLB controller and speakers started with --lb-class; the address ends Released, held).
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_PROTECTION_FINALIZER } from '../../api/v1alpha1/index.js';
import { GROUP, VERSION } from './support/kube.js';
import { createClaim, createClass, crd, expectAccounted, holdsOf, startPlatform, type Cr, type Platform } from './support/platform.js';
import { waitFor } from './support/ports.js';
import { recordScenario } from './support/summary.js';
import { labUnavailable, startLab, type Lab } from './support/lab/lab.js';
import { describeStream } from './support/lab/measure.js';
import { contains } from './support/lab/safety.js';
import { WORKLOAD_PORT } from './support/lab/plan.js';

const NS = 'tenant-a';
const LB_CLASS = 'example.com/public';
const CLAIM_ANNOTATION = 'local.sdn.cozystack.io/ip-address-claim';
const SETTLE = 60_000;
/** The garbage collector learns a new kind by discovery, every 30 s: room for one round and the deletes. */
const COLLECTED = 120_000;

const unavailable = labUnavailable();
if (unavailable && process.env.CI === 'true') {
  throw new Error(`the consumers suite cannot run on this machine: ${unavailable}`);
}
if (unavailable) {
  process.stdout.write(`consumers: skipped: ${unavailable}\n`);
}

let platform: Platform;
let lab: Lab;
const figures: string[] = [];
const admin = () => platform.admin;

const getClaim = async (name: string) => (await admin().custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS, name })) as Cr;
const getClass = async (name: string) => (await admin().custom.getClusterCustomObject({ ...crd('ipaddressclasses'), name })) as Cr;
const getAddress = async (name: string) => (await admin().custom.getClusterCustomObject({ ...crd('ipaddresses'), name })) as Cr;
const gone = (read: () => Promise<unknown>) => read().then(() => false, (e: { code?: number }) => (e.code === 404 ? true : Promise.reject(e)));
const ingressOf = (s: k8s.V1Service) => (s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip).filter((ip): ip is string => Boolean(ip));

/**
 * The order in which MetalLB's L2 election (speaker/layer2_controller.go, ShouldAnnounce) ranks
 * `nodes` for `ip`: by sha256 of `<node>#<ip>`. Under externalTrafficPolicy: Cluster the first
 * announces; under Local, the first of those with a ready endpoint.
 */
function electionOrder(nodes: readonly string[], ip: string): string[] {
  const hash = (n: string) => createHash('sha256').update(`${n}#${ip}`).digest();
  return [...nodes].sort((a, b) => Buffer.compare(hash(a), hash(b)));
}

/** The lab's nodes whose speaker (of one kind) logged announcing `ip` since it started. */
function announcers(ip: string, lbClass: string | undefined): string[] {
  const announced = (log: string) => log.split('\n').some((l) => l.includes('"serviceAnnounced"') && l.includes(`"${ip}"`));
  return lab.nodes.filter((n) => announced(lbClass ? n.classSpeakerLog(100_000) : n.speakerLog(100_000))).map((n) => n.name);
}

/** What PR #4324's controller shows the tenant of a claim: its class, its addresses, and the first condition that is not True. */
function consumerView(claim: Cr): { className?: string; addresses: string[]; notTrue?: string } {
  const notTrue = ((claim.status?.conditions ?? []) as { type: string; status: string; reason?: string }[]).find((c) => c.status !== 'True');
  return {
    className: claim.status?.className,
    addresses: ((claim.status?.addresses ?? []) as { address: string }[]).map((a) => a.address),
    notTrue: notTrue ? `${notTrue.type}=${notTrue.status} (${notTrue.reason})` : undefined,
  };
}

/** Every event of one claim, from before `start` resolves until stop. */
async function watchClaim(name: string): Promise<{ events: { type: string; object: Cr }[]; stop: () => void }> {
  const events: { type: string; object: Cr }[] = [];
  const watch = new k8s.Watch(platform.cluster.client());
  const controller = await watch.watch(
    `/apis/${GROUP}/${VERSION}/namespaces/${NS}/ipaddressclaims`,
    { fieldSelector: `metadata.name=${name}` },
    (type, object) => events.push({ type, object: object as Cr }),
    () => undefined,
  );
  return { events, stop: () => controller.abort() };
}

describe.skipIf(unavailable)('an EndpointAttachment-shaped consumer', () => {
  beforeAll(async () => {
    platform = await startPlatform([], '10.0.0.0/24,fd00:10:96::/112');
    await platform.startCore('address-controller');
    await platform.startDriver('metallb-iad');
    await platform.startMetallbController({ lbClass: LB_CLASS });
    // On the lab's public segment, clear of its hosts and of the other suites' ranges.
    await createClass(admin(), 'ea-delete', ['203.0.113.200/32'], 'Delete');
    await createClass(admin(), 'ea-retain', ['203.0.113.208/29'], 'Retain', { loadBalancerClass: LB_CLASS });
    lab = await startLab(platform, { nodes: 3, workloads: ['pg', 'vm'], lbClass: LB_CLASS });
  }, 600_000);

  afterAll(async () => {
    if (figures.length) {
      process.stdout.write(`\nconsumers figures\n${figures.map((f) => `  ${f}`).join('\n')}\n`);
    }
    try {
      await lab?.stop();
    } finally {
      await platform?.stop();
    }
  });

  it('kube-controller-manager’s garbage collector collects IPAddressClaims (a probe claim of no class, owned by a probe ConfigMap)', async () => {
    // The collector learns the kinds of CRDs installed after it started at its next discovery (every
    // 30 s), and until then cannot collect their objects: the runs below measure their collection
    // only once it can.
    const cm = await admin().core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'gc-probe' } } });
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'gc-probe', uid: cm.metadata!.uid!, controller: true, blockOwnerDeletion: true };
    await admin().custom.createNamespacedCustomObject({
      ...crd('ipaddressclaims'),
      namespace: NS,
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddressClaim', metadata: { name: 'gc-probe', namespace: NS, ownerReferences: [ref] }, spec: { className: 'no-such-class' } },
    });
    const started = Date.now();
    await admin().core.deleteNamespacedConfigMap({ namespace: NS, name: 'gc-probe' });
    await waitFor('the probe claim collected', () => gone(() => getClaim('gc-probe')), COLLECTED);
    figures.push(`garbage collector: a probe claim collected ${Date.now() - started} ms after its owner was deleted (includes the collector's discovery of the kind)`);
  });

  describe.each([
    { policy: 'Delete', className: 'ea-delete', workload: 'pg', propagation: 'Foreground' },
    { policy: 'Retain', className: 'ea-retain', workload: 'vm', propagation: 'Background' },
  ] as const)('$policy class ($className)', ({ policy, className, workload, propagation }) => {
    const owner = `attach-${workload}`;
    const endpoint = `${workload}-rw`;
    let ownerRef: k8s.V1OwnerReference;
    let claimName = '';
    let service = '';
    let address = { name: '', address: '' };
    let node = '';
    let lbClass: string | undefined;
    let url = '';

    it('the consumer mints a claim owned by its owner and renders the additive Service; a client reaches the workload, and only the endpoint’s node announces it', async () => {
      // The application's endpoint Service, as its chart would render it.
      const app = await admin().core.createNamespacedService({
        namespace: NS,
        body: {
          metadata: { name: endpoint },
          spec: { type: 'ClusterIP', selector: { app: workload, role: 'primary' }, ports: [{ name: 'main', port: 80, targetPort: WORKLOAD_PORT, protocol: 'TCP' }] },
        },
      });
      // The owner: a ConfigMap standing in for the EndpointAttachment (any object the garbage collector can own from).
      const cm = await admin().core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: owner }, data: { applicationRef: workload, endpoint } } });
      ownerRef = { apiVersion: 'v1', kind: 'ConfigMap', name: owner, uid: cm.metadata!.uid!, controller: true, blockOwnerDeletion: true };

      // The consumer: reads the class, mints the claim.
      lbClass = (await getClass(className)).spec.loadBalancerClass;
      const minted = (await admin().custom.createNamespacedCustomObject({
        ...crd('ipaddressclaims'),
        namespace: NS,
        body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddressClaim', metadata: { generateName: `${owner}-`, namespace: NS, ownerReferences: [ownerRef] }, spec: { className } },
      })) as Cr;
      claimName = minted.metadata.name!;
      await waitFor(`claim ${claimName} Bound`, async () => (await getClaim(claimName)).status?.phase === 'Bound', SETTLE);
      const bound = await getClaim(claimName);
      address = bound.status!.addresses[0];
      expect(bound.metadata.finalizers).toContain(CLAIM_PROTECTION_FINALIZER);
      const held = consumerView(bound);
      figures.push(`${policy}: before the Service, the consumer shows ${JSON.stringify(held)}`);
      expect(held.className).toBe(className);
      expect(held.addresses).toEqual([address.address]);

      // The endpoint on one node: the one the election ranks last for this address, so that under
      // externalTrafficPolicy: Cluster it would not be the announcer.
      const order = electionOrder(lab.nodes.map((n) => n.name), address.address);
      node = order.at(-1)!;
      lab.placeWorkload(workload, node);
      await lab.expose(NS, endpoint, workload, ['IPv4'], { node, portName: 'main' });

      // The additive Service, as the consumer renders it (no ipFamilies); its EndpointSlices are
      // written by the test, as the EndpointSlice controller would for its selector.
      service = `${owner}-lb`;
      url = await lab.target(address.address);
      await lab.expose(NS, service, workload, ['IPv4'], { node, portName: 'main' });
      const started = Date.now();
      await admin().core.createNamespacedService({
        namespace: NS,
        body: {
          metadata: { name: service, annotations: { [CLAIM_ANNOTATION]: claimName }, ownerReferences: [ownerRef], labels: { 'app.kubernetes.io/managed-by': 'endpoint-attachment' } },
          spec: {
            type: 'LoadBalancer',
            externalTrafficPolicy: 'Local',
            selector: app.spec!.selector,
            ports: app.spec!.ports!.map((p) => ({ name: p.name, port: p.port, targetPort: p.targetPort, protocol: p.protocol })),
            ...(lbClass ? { loadBalancerClass: lbClass } : {}),
          },
        },
      });
      const first = await lab.client.until(url, workload, { deadlineMs: SETTLE });
      expect(first.ok, `${workload} never answered on ${url}: ${JSON.stringify({ ...first, failedPorts: first.failedPorts.length })}\n${lab.logs(10)}`).toBe(true);
      figures.push(`${policy}: additive Service created → first answer on ${address.address}: ${first.at! - started} ms (endpoint on ${node}; election order ${order.join(', ')})`);
      const r = await lab.client.stream(url, workload, { intervalMs: 50, count: 40, timeoutMs: 1_000 }).result;
      expect(r.answers, describeStream(r)).toEqual({ [workload]: 40 });

      // Only the endpoint's node announces it: its speaker alone logged the announcement, and the
      // client's ARP entry for the address names its MAC.
      await waitFor('the announcement logged', async () => announcers(address.address, lbClass).length > 0, 10_000);
      expect(announcers(address.address, lbClass)).toEqual([node]);
      expect(announcers(address.address, lbClass ? undefined : LB_CLASS)).toEqual([]);
      expect(lab.neighbour(address.address)).toBe(lab.nodes.find((n) => n.name === node)!.mac());

      // What the consumer reads now.
      const s = await admin().core.readNamespacedService({ namespace: NS, name: service });
      expect(ingressOf(s)).toEqual([address.address]);
      expect(s.spec?.loadBalancerClass).toBe(lbClass);
      expect(s.spec?.ipFamilies).toEqual(['IPv4']); // defaulted by the apiserver: the consumer set none
      let view = consumerView(await getClaim(claimName));
      await waitFor('the claim shows no condition that is not True', async () => (view = consumerView(await getClaim(claimName))).notTrue === undefined, SETTLE).catch(() => {
        throw new Error(`the consumer would show ${view.notTrue}`);
      });
      expect(view).toEqual({ className, addresses: [address.address], notTrue: undefined });
      expect((await getAddress(address.name)).status?.associatedTo).toEqual({ kind: 'Service', namespace: NS, name: service });
      recordScenario(`consumers (${policy}${lbClass ? `, ${lbClass}` : ''}): minted claim → additive ETP Local Service → reached; only the endpoint's node announces`);
    });

    it(`the owner deleted (${propagation}) → the garbage collector deletes the claim through the core’s finalizer and the address goes as ${policy} says`, async () => {
      const watched = await watchClaim(claimName);
      const started = Date.now();
      try {
        await admin().core.deleteNamespacedConfigMap({ namespace: NS, name: owner, propagationPolicy: propagation });
        await waitFor(`claim ${claimName} collected`, () => gone(() => getClaim(claimName)), COLLECTED);
        // A GET may see it gone before the watch delivers the DELETED event: wait for the event too.
        await waitFor(`the DELETED event of claim ${claimName}`, async () => watched.events.at(-1)?.type === 'DELETED', 10_000);
      } finally {
        watched.stop();
      }
      const collectedMs = Date.now() - started;
      // The collector's delete met the core's finalizer: the claim was terminating with it, then went.
      const terminating = watched.events.find((e) => e.object.metadata.deletionTimestamp && e.object.metadata.finalizers?.includes(CLAIM_PROTECTION_FINALIZER));
      expect(terminating, `events: ${watched.events.map((e) => `${e.type} ${JSON.stringify(e.object.metadata.finalizers)} ${e.object.metadata.deletionTimestamp ?? ''}`).join('; ')}`).toBeDefined();
      expect(watched.events.at(-1)?.type).toBe('DELETED');
      await waitFor('the additive Service collected', () => gone(() => admin().core.readNamespacedService({ namespace: NS, name: service })), COLLECTED);
      await waitFor('the owner gone', () => gone(() => admin().core.readNamespacedConfigMap({ namespace: NS, name: owner })), COLLECTED);
      if (policy === 'Delete') {
        await waitFor(`${address.name} deleted`, () => gone(() => getAddress(address.name)), SETTLE);
        expect(await holdsOf(admin(), address.name)).toEqual([]);
        figures.push(`${policy}: owner deleted → claim collected ${collectedMs} ms, address deleted ${Date.now() - started} ms`);
        // Reusable: the class has this one address, and a new claim binds it.
        const reuseStarted = Date.now();
        await createClaim(admin(), `${owner}-again`, { className }, NS);
        await waitFor('a new claim Bound', async () => (await getClaim(`${owner}-again`)).status?.phase === 'Bound', SETTLE);
        expect((await getClaim(`${owner}-again`)).status!.addresses[0].address).toBe(address.address);
        figures.push(`${policy}: a new claim bound ${address.address} again in ${Date.now() - reuseStarted} ms`);
      } else {
        await waitFor(`${address.name} Released and held`, async () => {
          const a = await getAddress(address.name);
          const holds = await holdsOf(admin(), address.name);
          return a.status?.phase === 'Released' && !a.status?.associatedTo && holds.length === 1 && ingressOf(holds[0]!).join() === address.address;
        }, SETTLE);
        const released = await getAddress(address.name);
        expect(released.spec.claimRef).toMatchObject({ namespace: NS, name: claimName });
        expect(contains('203.0.113.208/29', released.spec.address)).toBe(true);
        figures.push(`${policy}: owner deleted → claim collected ${collectedMs} ms, address Released and held ${Date.now() - started} ms`);
      }
      // Nothing answers on the address any more (after kube-proxy's and the speaker's windows).
      await waitFor(`silence on ${url}`, async () => {
        const burst = await lab.client.stream(url, '(nobody)', { intervalMs: 100, count: 10, timeoutMs: 300 }).result;
        return isDeepStrictEqual(burst.answers, {});
      }, 15_000);
      await expectAccounted(admin());
      recordScenario(`consumers (${policy}): owner deleted → claim collected through the core's finalizer → address ${policy === 'Delete' ? 'deleted and reusable' : 'Released and held'}`);
    });
  });

  it('a consumer that does not copy the class’s loadBalancerClass: the tenant is shown Attached=False (LoadBalancerClassMismatch), and the address stays held', async () => {
    await createClaim(admin(), 'uncopied', { className: 'ea-retain' }, NS);
    await waitFor('claim uncopied Bound', async () => (await getClaim('uncopied')).status?.phase === 'Bound', SETTLE);
    const held = (await getClaim('uncopied')).status!.addresses[0] as { name: string; address: string };
    await admin().core.createNamespacedService({
      namespace: NS,
      body: {
        metadata: { name: 'uncopied-lb', annotations: { [CLAIM_ANNOTATION]: 'uncopied' } },
        spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Local', selector: { app: 'vm', role: 'primary' }, ports: [{ name: 'main', port: 80, targetPort: WORKLOAD_PORT, protocol: 'TCP' }] },
      },
    });
    let view = consumerView(await getClaim('uncopied'));
    await waitFor('the consumer shows the mismatch', async () => (view = consumerView(await getClaim('uncopied'))).notTrue?.startsWith('Attached=False (LoadBalancerClassMismatch)') ?? false, SETTLE).catch(() => {
      throw new Error(`the consumer shows ${JSON.stringify(view)}`);
    });
    figures.push(`a Service without the class's loadBalancerClass: the consumer shows ${JSON.stringify(view)}`);
    expect(ingressOf(await admin().core.readNamespacedService({ namespace: NS, name: 'uncopied-lb' }))).toEqual([]);
    expect((await getAddress(held.name)).status?.associatedTo).toBeUndefined();
    expect((await holdsOf(admin(), held.name)).map((h) => ingressOf(h).join())).toEqual([held.address]);
    await admin().core.deleteNamespacedService({ namespace: NS, name: 'uncopied-lb' });
    recordScenario('consumers: a Service without the class’s loadBalancerClass is shown to the tenant as LoadBalancerClassMismatch');
  });
});
