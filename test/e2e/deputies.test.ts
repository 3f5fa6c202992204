/**
 * The deputies: whoever writes a tenant's Service on the tenant's behalf after the driver pinned
 * it (helm, kubectl, a server-side applier, a full replace, Flux's drift correction, the
 * kubevirt cloud-controller-manager of a tenant Kubernetes cluster). Each of their write
 * patterns runs on the data path (test/e2e/support/lab/, docs/datapath.md) under a steady,
 * bounded request stream to the claim's address, while the apiserver's audit log counts the
 * driver's own writes (its ServiceAccount's; Events and the class's books apart). In a, b, c, e
 * and the kccm's update every write the driver tries counts; in d those the apiserver carried
 * out (its refused attempts, a 409 or a 404, are reported beside them):
 *
 *   a. `helm upgrade` (the real CLI) ×5          0 failed requests, the IP never changes, ≤ 2 driver writes an upgrade
 *   b. `kubectl apply` (client-side) ×5          likewise
 *   c. server-side apply, another manager, force ×5
 *   d. a full replace (PUT) without the driver's keys: the blackout (≤ 2 s), the same IP back, ≤ 3 driver writes
 *   e. Flux's drift correction: server-side apply of `helm template` as helm-controller every 2 s for 30 s
 *   f. the tenant cluster's kccm creating the Service: alone, and with MetalLB keys copied from the
 *      tenant cluster (the driver's pin wins); the fence still refuses those keys without the
 *      claim annotation, and to a plain tenant user with it.
 *
 * After every pattern the Service carries `local.sdn.cozystack.io/Attached` True/Attached and
 * the claim names it in `status.associatedTo`, with its own `Attached` condition.
 */
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apis, expectRejected } from './support/kube.js';
import { createClaim, createClass, crd, DRIVER_SA, expectAccounted, holdsOf, startPlatform, type Cr, type Platform } from './support/platform.js';
import { waitFor } from './support/ports.js';
import { recordFault, recordScenario } from './support/summary.js';
import { labUnavailable, startLab, type Lab } from './support/lab/lab.js';
import { dataPathFailures, describeStream, failureTimeline, underStream, type FaultStream } from './support/lab/measure.js';
import { POOL } from './support/lab/plan.js';
import { AuditLog, describeWrites, objectWrites, succeeded, type Write } from './support/deputies/audit.js';
import { CHART, helm, kubectl, removeToolState } from './support/deputies/tools.js';
import { describeObserved, observe, SERVICE_ATTACHED, stateOf, type Observed } from './support/deputies/watch.js';

const NS = 'tenant-a';
const CLAIM = 'local.sdn.cozystack.io/ip-address-claim';
/** The driver's keys on a Service it pinned (controllers/metallb-iad/well-known.ts, restated on purpose). */
const PIN = 'metallb.io/loadBalancerIPs';
const PINNED = 'metallb.drivers.local.sdn.cozystack.io/pinned';
const CARRIER = 'metallb.drivers.local.sdn.cozystack.io/carrier';
/** MetalLB's address keys other than the pin: a copying deputy may bring them; the driver drops them. */
const FOREIGN = ['metallb.io/address-pool', 'metallb.universe.tf/address-pool', 'metallb.universe.tf/loadBalancerIPs'];
/** An address of the class's range that no claim gets in this suite (claims take the lowest first): what a tenant cluster's Service pinned. */
const COPIED_IP = '203.0.113.190';
const SETTLE = 60_000;
const REAPPLIES = 5;

const serviceAccount = (namespace: string, name: string) => ({
  name: `system:serviceaccount:${namespace}:${name}`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
});
/** A tenant user who may edit Services in tenant-a (what cozy:tenant:admin grants), no more. */
const ALICE = { name: 'alice', groups: ['tenant-a-admin'] };
/** The kubevirt cloud-controller-manager of tenant-a's Kubernetes cluster "x": it copies every annotation of the inner Service. */
const KCCM = serviceAccount(NS, 'kubernetes-x-kccm');
/** Flux's helm-controller, which runs helm for the tenant's release and corrects drift. */
const HELM_CONTROLLER = serviceAccount('cozy-fluxcd', 'helm-controller');

const unavailable = labUnavailable();
if (unavailable && process.env.CI === 'true') {
  throw new Error(`the deputies suite cannot run on this machine: ${unavailable}`);
}
if (unavailable) {
  process.stdout.write(`deputies: skipped: ${unavailable}\n`);
}

let platform: Platform;
let lab: Lab;
let audit: AuditLog;
/** Every figure the suite measured, printed at the end. */
const figures: string[] = [];
const as = (user: { name: string }) => apis(platform.cluster.client(user.name));
const kubeconfigOf = (user: { name: string }) => platform.cluster.kubeconfig(user.name);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const getClaim = async (name: string) => (await platform.admin.custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS, name })) as Cr;
const readService = (name: string) => platform.admin.core.readNamespacedService({ namespace: NS, name });

/** A claim of the lab's class, Bound: its IPv4 address. */
async function boundClaim(name: string): Promise<{ name: string; address: string }> {
  await createClaim(platform.admin, name, { className: 'public' }, NS);
  await waitFor(`claim ${name} Bound`, async () => (await getClaim(name)).status?.phase === 'Bound', SETTLE);
  return (await getClaim(name)).status!.addresses[0];
}

/** A tenant's own manifest of its Service: what a deputy sends, never the driver's keys. */
function manifest(name: string, claim: string, revision: number, extra: { labels?: Record<string, string>; annotations?: Record<string, string> } = {}): k8s.V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name,
      namespace: NS,
      labels: { 'app.kubernetes.io/name': name, 'deputies.e2e/revision': String(revision), ...extra.labels },
      annotations: { [CLAIM]: claim, ...extra.annotations },
    },
    spec: {
      type: 'LoadBalancer',
      externalTrafficPolicy: 'Cluster',
      ipFamilyPolicy: 'SingleStack',
      ipFamilies: ['IPv4'],
      ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }],
    },
  };
}

/**
 * The driver's writes since `mark` that bear on the cases: those the apiserver carried out on the
 * tenant Services, the holds, the claims and addresses (`counted`); its refused attempts on them
 * (`refused`: a 409 Conflict, a 404); and the rest (`other`: Events, the class's books).
 */
function driverWrites(mark: number): { counted: Write[]; refused: Write[]; other: Write[] } {
  const all = audit.writesSince(mark, DRIVER_SA);
  const bearing = objectWrites(all).filter((w) => !/ipaddressclasses/.test(w.resource));
  return { counted: bearing.filter(succeeded), refused: bearing.filter((w) => !succeeded(w)), other: all.filter((w) => !bearing.includes(w)) };
}

/** Waits until the driver has written nothing for `quietMs` (at most 30 s): a case starts from a settled driver. */
async function settled(quietMs = 2_000): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const mark = audit.mark();
    await sleep(quietMs);
    const { counted, refused } = driverWrites(mark);
    if (counted.length + refused.length === 0) {
      return;
    }
  }
  figures.push('(the driver never went quiet for 2 s within 30 s before a case)');
}

/** Everything the verdict should say of `service` carrying `ip` for `claim`; what does not hold. */
async function verdictProblems(service: string, claim: string, ip: string): Promise<string[]> {
  const problems: string[] = [];
  const s = await readService(service);
  const state = stateOf(s);
  if (state.ingress !== ip) problems.push(`Service ${service}: ingress ${state.ingress || '(none)'}, not ${ip}`);
  if (state.pin !== ip) problems.push(`Service ${service}: ${PIN} ${state.pin || '(none)'}, not ${ip}`);
  const condition = (s.status?.conditions ?? []).find((c) => c.type === SERVICE_ATTACHED);
  if (condition?.status !== 'True' || condition.reason !== 'Attached') {
    problems.push(`Service ${service}: condition ${SERVICE_ATTACHED} is ${condition ? `${condition.status}/${condition.reason}: ${condition.message}` : 'absent'}, not True/Attached`);
  }
  const c = await getClaim(claim);
  const to = c.status?.associatedTo;
  if (to?.kind !== 'Service' || to.namespace !== NS || to.name !== service) {
    problems.push(`claim ${claim}: status.associatedTo is ${JSON.stringify(to)}, not {kind: Service, namespace: ${NS}, name: ${service}}`);
  }
  const attached = ((c.status?.conditions ?? []) as { type: string; status: string; reason?: string; message?: string }[]).find((x) => x.type === 'Attached');
  if (attached?.status !== 'True' || attached.reason !== 'Attached') {
    problems.push(`claim ${claim}: condition Attached is ${attached ? `${attached.status}/${attached.reason}: ${attached.message}` : 'absent'}, not True/Attached`);
  }
  return problems;
}

/**
 * The Service carries the claim's address and the verdict says so, on the Service and on the
 * claim (waiting up to `waitMs` for it). Soft: a missing verdict is reported and the case's
 * data-path figures are still measured.
 */
async function expectVerdict(service: string, claim: string, ip: string, waitMs = 10_000): Promise<void> {
  let problems: string[] = [];
  await waitFor(`the verdict on ${service}`, async () => (problems = await verdictProblems(service, claim, ip)).length === 0, waitMs).catch(() => undefined);
  expect.soft(problems, `the verdict on ${NS}/${service} (claim ${claim}, ${ip})`).toEqual([]);
}

/** The Service answers on `url` from `workload`; then the driver settles. The attach time, from `since`. */
async function answering(url: string, workload: string, since: number): Promise<number> {
  const r = await lab.client.until(url, workload, { deadlineMs: SETTLE });
  if (!r.ok) {
    throw new Error(`${workload} never answered on ${url}: ${JSON.stringify(r)}\n${lab.logs(10)}`);
  }
  return r.at! - since;
}

interface Measured {
  readonly stream: FaultStream;
  readonly observed: Observed;
  /** The driver's writes the apiserver carried out. */
  readonly writes: Write[];
  /** Its attempts the apiserver refused (409, 404). */
  readonly refused: Write[];
  readonly other: Write[];
  /** When each deputy write began (epoch ms). */
  readonly applies: number[];
  readonly t0: number;
}

/**
 * `work` (which calls `applied()` as each deputy write begins) under a stream to `url` that
 * `workload` must answer, the Service watched, the driver's writes counted from just before.
 */
async function measure(service: string, url: string, workload: string, work: (applied: () => void) => Promise<void>): Promise<Measured> {
  await settled();
  const mark = audit.mark();
  const stop = observe(platform.admin.core, NS, service);
  const applies: number[] = [];
  const streamed = await underStream(lab, url, workload, () => work(() => applies.push(Date.now())), { settleMs: 3_000 }).then(
    (stream) => ({ stream }),
    (error: unknown) => ({ error }),
  );
  const observed = await stop();
  if ('error' in streamed) {
    throw streamed.error;
  }
  const stream = streamed.stream;
  const { counted, refused, other } = driverWrites(mark);
  return { stream, observed, writes: counted, refused, other, applies, t0: stream.faultAt };
}

/** The driver's writes after each deputy write (until the next began): "0, 0, 1, 0, 0". */
function perApply(m: Measured): string {
  return m.applies.map((at, i) => m.writes.filter((w) => w.at >= at && w.at < (m.applies[i + 1] ?? Infinity)).length).join(', ');
}

/** All the driver's writes bearing on the cases since `mark` (carried out or refused), in order. */
function describeAttachWrites(mark: number, t0: number): string {
  const { counted, refused } = driverWrites(mark);
  return describeWrites([...counted, ...refused].sort((a, b) => a.at - b.at), t0);
}

/** The driver's refused attempts, Events and class books, when there were any. */
function describeBesides(m: Measured): string {
  return (
    (m.refused.length ? `; refused driver writes ${m.refused.length}: ${describeWrites(m.refused, m.t0)}` : '') +
    (m.other.length ? `; besides, Events/class books: ${describeWrites(m.other, m.t0)}` : '')
  );
}

/** The figures of a re-apply case, and its targets: not one request lost, the IP never changed, at most 2 driver writes per re-apply. */
function expectSteady(what: string, m: Measured, ip: string): void {
  const failures = dataPathFailures(m.stream);
  figures.push(
    `${what}: ${m.applies.length} writes by the deputy; stream ${describeStream(m.stream)}${m.stream.failed ? `; ${failureTimeline(m.stream, m.t0)}` : ''}; ` +
      `driver writes ${m.writes.length} (per deputy write: ${perApply(m)})${m.writes.length ? `: ${describeWrites(m.writes, m.t0)}` : ''}` +
      `${describeBesides(m)}; the Service as polled: ${describeObserved(m.observed, m.t0)}`,
  );
  expect(failures, `${what}: ${describeStream(m.stream)}; ${failureTimeline(m.stream, m.t0)}`).toBe(0);
  expect(m.observed.states.map((s) => s.ingress), `${what}: the Service's IP as polled: ${describeObserved(m.observed, m.t0)}`).toEqual([ip]);
  expect([...new Set(m.observed.states.map((s) => s.pin))], `${what}: the Service's pin`).toEqual([ip]);
  // Never a fight: every write the driver tried counts here, refused ones (409, 404) too.
  expect(m.writes.length + m.refused.length, `${what}: the driver's writes: ${describeWrites([...m.writes, ...m.refused], m.t0)}`).toBeLessThanOrEqual(2 * m.applies.length);
  expect.soft([...new Set(m.observed.states.map((s) => s.attached))], `${what}: ${SERVICE_ATTACHED} as polled`).toEqual(['True/Attached']);
}

describe.skipIf(unavailable)('the deputies, on the data path', () => {
  beforeAll(async () => {
    platform = await startPlatform([ALICE, KCCM, HELM_CONTROLLER], undefined, { auditLog: true });
    if (!platform.cluster.auditLog) {
      throw new Error('the cluster keeps no audit log: the driver’s writes cannot be counted');
    }
    audit = new AuditLog(platform.cluster.auditLog);
    const admin = platform.admin;
    // Alice and the kccm may write Services in tenant-a (RBAC lets them; only the fence decides on MetalLB's keys).
    await admin.rbac.createNamespacedRole({
      namespace: NS,
      body: { metadata: { name: 'service-writer' }, rules: [{ apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }] },
    });
    await admin.rbac.createNamespacedRoleBinding({
      namespace: NS,
      body: {
        metadata: { name: 'service-writer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'service-writer' },
        subjects: [
          { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: ALICE.name },
          { kind: 'ServiceAccount', namespace: NS, name: 'kubernetes-x-kccm' },
        ],
      },
    });
    // Flux's helm-controller is cluster-admin in Cozystack.
    await admin.rbac.createClusterRoleBinding({
      body: {
        metadata: { name: 'e2e-helm-controller' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', namespace: 'cozy-fluxcd', name: 'helm-controller' }],
      },
    });
    await platform.startCore('address-controller');
    await platform.startDriver('metallb-iad');
    await createClass(admin, 'public', [POOL.v4], 'Retain');
    lab = await startLab(platform, { nodes: 2, workloads: ['w1', 'w2'] });
    // The apiserver loads a new policy a moment after helm created it: until then an admitted key proves nothing.
    await waitFor('the fence in force', async () => {
      try {
        await as(ALICE).core.createNamespacedService({ namespace: NS, body: { ...manifest('probe', 'none', 0), metadata: { name: 'probe', annotations: { [PIN]: COPIED_IP } } }, dryRun: 'All' });
        return false;
      } catch (error) {
        return (error as k8s.ApiException<unknown>).code === 403;
      }
    }, 30_000);
  }, 600_000);

  afterAll(async () => {
    if (figures.length) {
      process.stdout.write(`\ndeputies figures\n${figures.map((f) => `  ${f}`).join('\n')}\n`);
    }
    try {
      await lab?.stop();
    } finally {
      await platform?.stop();
      removeToolState();
    }
  });

  describe('a release by helm, then Flux’s drift correction', () => {
    const service = 'chart-web';
    let ip = '';
    let url = '';
    const release = (verb: 'install' | 'upgrade', revision: number) =>
      helm(verb, 'chart', CHART, '--namespace', NS, '--kubeconfig', kubeconfigOf(HELM_CONTROLLER), '--set-string', `name=${service},claim=chart,revision=${revision}`);

    it('a. helm upgrade ×5 of a chart whose Service names the claim: not one request fails, the IP never changes, ≤ 2 driver writes an upgrade', async () => {
      ({ address: ip } = await boundClaim('chart'));
      url = await lab.target(ip);
      await lab.expose(NS, service, 'w1');
      const start = Date.now();
      await release('install', 0);
      figures.push(`a. helm install → first answer: ${await answering(url, 'w1', start)} ms`);
      await expectVerdict(service, 'chart', ip);
      const took: number[] = [];
      const m = await measure(service, url, 'w1', async (applied) => {
        for (let i = 1; i <= REAPPLIES; i++) {
          applied();
          took.push((await release('upgrade', i)).ms);
          await sleep(1_000);
        }
      });
      figures.push(`a. helm upgrade took ${took.join(', ')} ms`);
      const live = await readService(service);
      expect(live.metadata?.labels?.['deputies.e2e/revision'], 'each upgrade patched the Service').toBe(String(REAPPLIES));
      expectSteady('a. helm upgrade ×5', m, ip);
      await expectVerdict(service, 'chart', ip, 3_000);
      recordScenario(`deputies: helm upgrade ×5 under traffic: ${dataPathFailures(m.stream)} failed, ${m.writes.length} driver writes`);
    });

    it('e. drift correction: server-side apply of `helm template` as helm-controller every 2 s for 30 s: not one request fails, the IP never changes, ≤ 2 driver writes an apply', async () => {
      expect(ip, 'case a attached the release').not.toBe('');
      const rendered = (await helm('template', 'chart', CHART, '--namespace', NS, '--set-string', `name=${service},claim=chart,revision=${REAPPLIES}`)).stdout;
      const objects = parseAllDocuments(rendered).map((d) => d.toJS() as k8s.KubernetesObject).filter(Boolean);
      expect(objects.map((o) => `${o.kind}/${o.metadata?.name}`)).toEqual([`Service/${service}`]);
      const desired = { ...objects[0]!, metadata: { ...objects[0]!.metadata, namespace: NS } };
      const flux = k8s.KubernetesObjectApi.makeApiClient(platform.cluster.client(HELM_CONTROLLER.name));
      const versions = new Set<string>();
      const m = await measure(service, url, 'w1', async (applied) => {
        const until = Date.now() + 30_000;
        while (Date.now() < until) {
          const tick = Date.now();
          applied();
          const result = await flux.patch(desired, undefined, undefined, 'helm-controller', true, k8s.PatchStrategy.ServerSideApply);
          versions.add(result.metadata?.resourceVersion ?? '');
          await sleep(Math.max(0, 2_000 - (Date.now() - tick)));
        }
      });
      figures.push(`e. ${m.applies.length} server-side applies as helm-controller changed the Service ${versions.size - 1} time(s) after the first`);
      expectSteady('e. drift correction (server-side apply as helm-controller every 2 s, 30 s)', m, ip);
      await expectVerdict(service, 'chart', ip, 3_000);
      recordScenario(`deputies: Flux drift correction (SSA every 2 s, 30 s) under traffic: ${dataPathFailures(m.stream)} failed, ${m.writes.length} driver writes for ${m.applies.length} applies`);
    });
  });

  it('b. kubectl apply (client-side) ×5 by a tenant user: not one request fails, the IP never changes, ≤ 2 driver writes an apply', async () => {
    const service = 'kubectl-web';
    const { address: ip } = await boundClaim('kubectl');
    const url = await lab.target(ip);
    await lab.expose(NS, service, 'w2');
    const apply = (revision: number) => kubectl(kubeconfigOf(ALICE), ['apply', '-f', '-'], JSON.stringify(manifest(service, 'kubectl', revision)));
    const start = Date.now();
    await apply(0);
    figures.push(`b. kubectl apply (create) → first answer: ${await answering(url, 'w2', start)} ms`);
    await expectVerdict(service, 'kubectl', ip);
    const m = await measure(service, url, 'w2', async (applied) => {
      for (let i = 1; i <= REAPPLIES; i++) {
        applied();
        await apply(i);
        await sleep(1_000);
      }
    });
    expect((await readService(service)).metadata?.labels?.['deputies.e2e/revision'], 'each apply patched the Service').toBe(String(REAPPLIES));
    expectSteady('b. kubectl apply ×5 (alice)', m, ip);
    await expectVerdict(service, 'kubectl', ip, 3_000);
    recordScenario(`deputies: kubectl apply ×5 under traffic: ${dataPathFailures(m.stream)} failed, ${m.writes.length} driver writes`);
  });

  it('c. server-side apply ×5 by a tenant user as another field manager, with force: not one request fails, the IP never changes, ≤ 2 driver writes an apply', async () => {
    const service = 'ssa-web';
    const { address: ip } = await boundClaim('ssa');
    const url = await lab.target(ip);
    const start = Date.now();
    await lab.createService(NS, service, 'w1', { claim: 'ssa' });
    figures.push(`c. Service created → first answer: ${await answering(url, 'w1', start)} ms`);
    await expectVerdict(service, 'ssa', ip);
    const alice = k8s.KubernetesObjectApi.makeApiClient(platform.cluster.client(ALICE.name));
    const m = await measure(service, url, 'w1', async (applied) => {
      for (let i = 1; i <= REAPPLIES; i++) {
        applied();
        await alice.patch(manifest(service, 'ssa', i), undefined, undefined, 'tenant-deployer', true, k8s.PatchStrategy.ServerSideApply);
        await sleep(1_000);
      }
    });
    const live = await readService(service);
    expect(live.metadata?.labels?.['deputies.e2e/revision']).toBe(String(REAPPLIES));
    expect(live.metadata?.managedFields?.map((f) => f.manager)).toContain('tenant-deployer');
    expectSteady('c. server-side apply ×5 (alice, manager tenant-deployer, force)', m, ip);
    await expectVerdict(service, 'ssa', ip, 3_000);
    recordScenario(`deputies: server-side apply ×5 (another manager, force) under traffic: ${dataPathFailures(m.stream)} failed, ${m.writes.length} driver writes`);
  });

  it('d. a full replace (PUT) without the driver’s keys, by a tenant user: the blackout is at most 2 s, the same IP comes back, ≤ 3 driver writes', async () => {
    const service = 'replace-web';
    const { address: ip, name: addressName } = await boundClaim('replace');
    const url = await lab.target(ip);
    const start = Date.now();
    await lab.createService(NS, service, 'w2', { claim: 'replace' });
    figures.push(`d. Service created → first answer: ${await answering(url, 'w2', start)} ms`);
    await expectVerdict(service, 'replace', ip);
    const before = (await readService(service)).metadata!;
    expect(before.annotations?.[PIN]).toBe(ip);
    expect(before.annotations?.[PINNED]).toBe('true');
    expect(before.labels?.[CARRIER]).toBe('true');
    // `kubectl replace -f` of the tenant's own manifest: a PUT of the whole object, none of the driver's keys in it.
    const m = await measure(service, url, 'w2', async (applied) => {
      applied();
      await kubectl(kubeconfigOf(ALICE), ['replace', '-f', '-'], JSON.stringify(manifest(service, 'replace', 1)));
    });
    const blackoutMs = m.stream.failed ? m.stream.longestGapMs : 0;
    figures.push(
      `d. full replace without the driver's keys: blackout ${blackoutMs} ms (${dataPathFailures(m.stream)} requests failed; ${describeStream(m.stream)}${m.stream.failed ? `; ${failureTimeline(m.stream, m.t0)}` : ''}); ` +
        `driver writes ${m.writes.length}: ${describeWrites(m.writes, m.t0)}${describeBesides(m)}; the Service as polled: ${describeObserved(m.observed, m.t0)}`,
    );
    recordFault('deputies: full replace (PUT) of an attached Service without the driver’s keys, under traffic');
    await waitFor(`${service} carries ${ip} again`, async () => stateOf(await readService(service)).ingress === ip, SETTLE);
    const after = (await readService(service)).metadata!;
    expect(after.labels?.['deputies.e2e/revision'], 'the replace went through').toBe('1');
    expect(after.annotations?.[PIN], 'the driver re-pinned the same IP').toBe(ip);
    expect(after.labels?.[CARRIER]).toBe('true');
    // The PUT really took the keys off: the driver put them back (the poller may not have seen the gap).
    expect(m.writes.filter((w) => w.verb === 'update' && w.resource === 'services' && w.name === service).length, 'the driver re-pinned the Service').toBeGreaterThan(0);
    const ips = new Set(m.observed.states.map((s) => s.ingress).filter(Boolean));
    expect([...ips], `the Service's IPs as polled: ${describeObserved(m.observed, m.t0)}`).toEqual([ip]);
    expect(m.stream.answers, 'only the rightful workload answered').toEqual({ w2: m.stream.answered });
    expect(blackoutMs, `the blackout: ${describeStream(m.stream)}`).toBeLessThanOrEqual(2_000);
    expect(m.writes.length, `the driver's writes: ${describeWrites(m.writes, m.t0)}`).toBeLessThanOrEqual(3);
    expect(await holdsOf(platform.admin, addressName), 'no hold left once the Service carries the address again').toEqual([]);
    await expectVerdict(service, 'replace', ip);
    recordScenario(`deputies: full replace without the driver's keys: blackout ${blackoutMs} ms, same IP back, ${m.writes.length} driver writes`);
  });

  describe('f. the tenant cluster’s kubevirt cloud-controller-manager (a -kccm ServiceAccount of the namespace) creates the Service', () => {
    const kccm = () => as(KCCM).core;
    /** The Service the kccm makes for an inner Service: its labels, the inner Service's annotations, the inner ports (to NodePorts, here the workload's port). */
    const kccmService = (name: string, annotations: Record<string, string>): k8s.V1Service => ({
      metadata: {
        name,
        namespace: NS,
        annotations,
        labels: { 'cluster.x-k8s.io/tenant-service-name': 'web', 'cluster.x-k8s.io/tenant-service-namespace': 'default', 'cluster.x-k8s.io/cluster-name': 'kubernetes-x' },
      },
      spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Cluster', ipFamilyPolicy: 'SingleStack', ipFamilies: ['IPv4'], ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
    });

    /** 60 requests over 3 s once attached: every one answered by `workload`. */
    const expectSteadyNow = async (what: string, url: string, workload: string) => {
      const r = await lab.client.stream(url, workload, { intervalMs: 50, count: 60, timeoutMs: 1_000 }).result;
      figures.push(`${what}, once attached: ${describeStream(r)}`);
      expect(dataPathFailures(r), `${what}: ${describeStream(r)}`).toBe(0);
      expect(r.answers).toEqual({ [workload]: 60 });
    };

    it('alone (only the claim annotation): the client reaches the workload on the claim’s IP', async () => {
      const service = 'a-kccm-alone';
      const { address: ip } = await boundClaim('kccm-alone');
      const url = await lab.target(ip);
      await lab.expose(NS, service, 'w2');
      const start = Date.now();
      const mark = audit.mark();
      await kccm().createNamespacedService({ namespace: NS, body: kccmService(service, { [CLAIM]: 'kccm-alone' }) });
      figures.push(`f. kccm's Service (claim annotation alone) → first answer: ${await answering(url, 'w2', start)} ms`);
      await expectVerdict(service, 'kccm-alone', ip);
      figures.push(`f. driver writes for the kccm's Service (alone), attach included: ${describeAttachWrites(mark, start)}`);
      expect(stateOf(await readService(service)).ingress).toBe(ip);
      await expectSteadyNow('f. kccm alone', url, 'w2');
      recordScenario('deputies: a Service the tenant cluster’s kccm created, naming a claim, carries its IP');
    });

    describe('with MetalLB keys copied from the tenant cluster (`metallb.io/loadBalancerIPs` of another IP, `metallb.universe.tf/address-pool`)', () => {
      const service = 'a-kccm-copied';
      let ip = '';
      let url = '';

      it('is admitted; the driver pins the claim’s IP over the copied one and drops the pool; the client reaches the workload on the claim’s IP, nothing answers on the copied IP', async () => {
        ({ address: ip } = await boundClaim('kccm-copied'));
        expect(ip).not.toBe(COPIED_IP);
        url = await lab.target(ip);
        const copiedUrl = await lab.target(COPIED_IP);
        await lab.expose(NS, service, 'w1');
        const start = Date.now();
        const mark = audit.mark();
        const created = await kccm().createNamespacedService({
          namespace: NS,
          body: kccmService(service, { [CLAIM]: 'kccm-copied', [PIN]: COPIED_IP, 'metallb.universe.tf/address-pool': 'whatever' }),
        });
        expect(created.metadata?.annotations?.[PIN], 'admitted as the kccm wrote it').toBe(COPIED_IP);
        figures.push(`f. kccm's Service (MetalLB keys copied) → first answer on the claim's IP: ${await answering(url, 'w1', start)} ms`);
        await expectVerdict(service, 'kccm-copied', ip);
        figures.push(`f. driver writes for the kccm's Service (copied keys), attach included: ${describeAttachWrites(mark, start)}`);
        const live = await readService(service);
        expect(stateOf(live).ingress, 'the carried IP is the claim’s').toBe(ip);
        expect(live.metadata?.annotations?.[PIN], 'the driver’s pin replaced the copied one').toBe(ip);
        for (const key of FOREIGN) {
          expect(live.metadata?.annotations?.[key], `${key} dropped by the driver`).toBeUndefined();
        }
        const r = await lab.client.stream(copiedUrl, '(nobody)', { intervalMs: 100, count: 20, timeoutMs: 300 }).result;
        expect(r.answers, `something answered on the copied IP ${COPIED_IP}: ${describeStream(r)}`).toEqual({});
        const carriers = (await platform.admin.core.listServiceForAllNamespaces()).items.filter((s) => stateOf(s).ingress.split(',').includes(COPIED_IP));
        expect(carriers.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`), `no Service carries the copied IP ${COPIED_IP}`).toEqual([]);
        await expectSteadyNow('f. kccm with copied keys', url, 'w1');
        recordScenario('deputies: a kccm’s Service with copied MetalLB keys carries the claim’s IP, not the copied one');
      });

      it('the kccm’s later update of its ports (read, point the port at a new NodePort, Update, as its UpdateLoadBalancer does): not one request fails, the IP never changes', async () => {
        expect(ip, 'the kccm’s Service attached').not.toBe('');
        // The inner Service's NodePort changed: the kccm points its port there (selectorless, the lab's
        // EndpointSlices name the workload's port, so the data path does not depend on targetPort).
        const m = await measure(service, url, 'w1', async (applied) => {
          applied();
          const current = await kccm().readNamespacedService({ namespace: NS, name: service });
          current.spec!.ports = [{ port: 80, targetPort: 30080, protocol: 'TCP' }];
          await kccm().replaceNamespacedService({ namespace: NS, name: service, body: current });
        });
        expect((await readService(service)).spec?.ports?.[0]?.targetPort).toBe(30080);
        expectSteady('f. kccm UpdateLoadBalancer (ports)', m, ip);
        await expectVerdict(service, 'kccm-copied', ip, 3_000);
        recordScenario(`deputies: the kccm’s port update under traffic: ${dataPathFailures(m.stream)} failed, ${m.writes.length} driver writes`);
      });
    });

    it('without the claim annotation, the kccm’s Service carrying MetalLB’s keys is refused, the message naming the key and the claim annotation', async () => {
      // dryRun: admission runs all the same, and a wrongly admitted Service is not left behind.
      const create = (annotations: Record<string, string>) => kccm().createNamespacedService({ namespace: NS, body: kccmService('a-kccm-unclaimed', annotations), dryRun: 'All' });
      await expectRejected(create({ [PIN]: COPIED_IP }), 403, PIN);
      await expectRejected(create({ [PIN]: COPIED_IP }), 403, CLAIM);
      await expectRejected(create({ 'metallb.universe.tf/address-pool': 'whatever' }), 403, 'metallb.universe.tf/address-pool');
      recordScenario('deputies: the fence refuses the kccm MetalLB’s keys on a Service naming no claim');
    });

    it('a plain tenant user (not a -kccm ServiceAccount) is refused the copied keys even with the claim annotation', async () => {
      await boundClaim('alice-copied');
      const create = (annotations: Record<string, string>) => as(ALICE).core.createNamespacedService({ namespace: NS, body: kccmService('alice-copied', annotations), dryRun: 'All' });
      await expectRejected(create({ [CLAIM]: 'alice-copied', [PIN]: COPIED_IP }), 403, PIN);
      await expectRejected(create({ [CLAIM]: 'alice-copied', 'metallb.universe.tf/address-pool': 'whatever' }), 403, 'metallb.universe.tf/address-pool');
      recordScenario('deputies: the fence refuses a tenant user MetalLB’s keys even beside the claim annotation');
    });
  });

  it('every address is accounted for after the deputies', async () => {
    await expectAccounted(platform.admin);
    recordScenario('deputies: ledger accounted after every deputy pattern');
  });
});
