/**
 * A class that declares a load-balancer class (`IPAddressClass.spec.loadBalancerClass`) beside
 * one that declares none, each served by its own MetalLB: the platform's controller (no
 * `--lb-class`: Services with no class only) and a second one in the same namespace started with
 * `--lb-class=<the class's>` (its Services only). The class's holds carry its
 * spec.loadBalancerClass and wait for the MetalLB of that class; a tenant Service of that class
 * naming a claim attaches, one of another class (or none) is refused with
 * LoadBalancerClassMismatch; the class without one keeps working with the MetalLB without the
 * flag; neither MetalLB writes the other's Services. On the data path (when the lab can run) each
 * node runs a speaker of each kind, and each attachment is announced by a speaker of its kind
 * only. `kubectl get ipclass` shows the class's LBClass, and the field is immutable.
 */
import { isDeepStrictEqual } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, VERSION, expectRejected } from './support/kube.js';
import {
  createClaim,
  createClass,
  crd,
  expectAccounted,
  holdsOf,
  METALLB_FIELD_MANAGER,
  PLACEHOLDERS,
  startPlatform,
  type Cr,
  type MetallbController,
  type Platform,
} from './support/platform.js';
import { waitFor } from './support/ports.js';
import { kubectl as toolsKubectl, removeToolState } from './support/deputies/tools.js';
import { recordScenario } from './support/summary.js';
import { labUnavailable, startLab, type Lab } from './support/lab/lab.js';
import { attach, describeStream } from './support/lab/measure.js';
import { contains } from './support/lab/safety.js';
import { loadBalancer } from './support/lab/workloads.js';

const NS = 'tenant-a';
const LB_CLASS = 'example.com/public';
const OTHER_LB_CLASS = 'example.com/other';
/** The class declaring LB_CLASS and the one declaring none: disjoint ranges on the lab's public segment. */
const CLASSED = { name: 'lbc', range: '203.0.113.128/28' } as const;
const PLAIN = { name: 'plain', range: '203.0.113.144/28' } as const;
const PIN = 'metallb.io/loadBalancerIPs';
const SERVICE_ATTACHED = 'local.sdn.cozystack.io/Attached';
const CLAIM_ATTACHED = 'Attached';
const MISMATCH = 'LoadBalancerClassMismatch';
const SETTLE = 60_000;

const unavailable = labUnavailable();
if (unavailable) {
  process.stdout.write(`lb-class: the data-path checks are skipped: ${unavailable}\n`);
}

let platform: Platform;
let lab: Lab | undefined;
let lbMetallb: MetallbController;
const figures: string[] = [];
const admin = () => platform.admin;

const getClaim = async (name: string) => (await admin().custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NS, name })) as Cr;
const getAddress = async (name: string) => (await admin().custom.getClusterCustomObject({ ...crd('ipaddresses'), name })) as Cr;
const readService = (name: string, namespace = NS) => admin().core.readNamespacedService({ name, namespace });
const ingressOf = (s: k8s.V1Service) => (s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip).filter((ip): ip is string => Boolean(ip));
const conditionOf = (conditions: { type: string; status: string; reason?: string; message?: string }[] | undefined, type: string) => conditions?.find((c) => c.type === type);

/**
 * Who wrote the Service's load-balancer status, by field manager: MetalLB's status write is
 * recorded under its program name (support/platform.ts), so the two MetalLBs tell apart.
 */
function loadBalancerStatusWriters(s: k8s.V1Service): string[] {
  return (s.metadata?.managedFields ?? [])
    .filter((m) => m.subresource === 'status' && JSON.stringify(m.fieldsV1 ?? {}).includes('"f:loadBalancer"'))
    .map((m) => m.manager ?? '');
}

/** A claim, Bound: its one address. */
async function boundClaim(name: string, className: string): Promise<{ name: string; address: string }> {
  await createClaim(admin(), name, { className }, NS);
  await waitFor(`claim ${name} Bound`, async () => (await getClaim(name)).status?.phase === 'Bound', SETTLE);
  return (await getClaim(name)).status!.addresses[0];
}

/** A tenant LoadBalancer Service naming `claim`, of `lbClass` when given (fronting a lab workload when the lab runs). */
async function tenantService(name: string, claim: string, lbClass: string | undefined, workload = 'w1'): Promise<void> {
  if (lab) {
    await lab.createService(NS, name, workload, { claim, loadBalancerClass: lbClass });
  } else {
    await admin().core.createNamespacedService({ namespace: NS, body: loadBalancer(NS, name, { claim, loadBalancerClass: lbClass }) });
  }
}

/** The Service carries the claim's address: ingress, the Service's and the claim's Attached conditions, associatedTo on both. */
async function expectAttached(service: string, claim: string, address: { name: string; address: string }): Promise<void> {
  let seen = '';
  await waitFor(`${service} attached to ${claim}`, async () => {
    const s = await readService(service);
    const c = await getClaim(claim);
    const a = await getAddress(address.name);
    const sc = conditionOf(s.status?.conditions, SERVICE_ATTACHED);
    const cc = conditionOf(c.status?.conditions, CLAIM_ATTACHED);
    seen = JSON.stringify({ ingress: ingressOf(s), service: sc, claim: cc, claimAssociatedTo: c.status?.associatedTo, addressAssociatedTo: a.status?.associatedTo });
    const to = { kind: 'Service', namespace: NS, name: service };
    return (
      ingressOf(s).join() === address.address &&
      sc?.status === 'True' && sc.reason === 'Attached' &&
      cc?.status === 'True' &&
      isDeepStrictEqual(c.status?.associatedTo, to) &&
      isDeepStrictEqual(a.status?.associatedTo, to)
    );
  }, SETTLE).catch((error: Error) => {
    throw new Error(`${error.message}; last seen ${seen}`);
  });
  expect(await holdsOf(admin(), address.name)).toEqual([]);
}

/** The Service is refused with LoadBalancerClassMismatch on it and on the claim; it gets nothing, and the claim's address stays held. */
async function expectMismatch(service: string, claim: string, address: { name: string; address: string }, classes: string[]): Promise<string> {
  let seen = '';
  await waitFor(`${service} refused with ${MISMATCH}`, async () => {
    const s = await readService(service);
    const c = await getClaim(claim);
    const sc = conditionOf(s.status?.conditions, SERVICE_ATTACHED);
    const cc = conditionOf(c.status?.conditions, CLAIM_ATTACHED);
    seen = JSON.stringify({ service: sc, claim: cc });
    return sc?.status === 'False' && sc.reason === MISMATCH && cc?.status === 'False' && cc.reason === MISMATCH;
  }, SETTLE).catch((error: Error) => {
    throw new Error(`${error.message}; last seen ${seen}`);
  });
  const s = await readService(service);
  const message = conditionOf(s.status?.conditions, SERVICE_ATTACHED)!.message ?? '';
  for (const c of classes) {
    expect(message, 'the refusal names both classes').toContain(c);
  }
  // Given time to go wrong: no pin, no IP, and the address held as before.
  await new Promise((r) => setTimeout(r, 3_000));
  const after = await readService(service);
  expect(after.metadata?.annotations?.[PIN]).toBeUndefined();
  expect(ingressOf(after)).toEqual([]);
  const holds = await holdsOf(admin(), address.name);
  expect(holds.map((h) => ingressOf(h).join())).toEqual([address.address]);
  expect((await getAddress(address.name)).status?.associatedTo).toBeUndefined();
  expect((await getClaim(claim)).status?.associatedTo).toBeUndefined();
  return message;
}

async function kubectl(args: string[]): Promise<string> {
  return (await toolsKubectl(platform.cluster.kubeconfig(), args)).stdout;
}

/** The lab's nodes whose speaker of one kind logged announcing `ip`. */
function announcers(ip: string, kind: 'lb-class' | 'default'): string[] {
  const announced = (log: string) => log.split('\n').some((l) => l.includes('"serviceAnnounced"') && l.includes(`"${ip}"`));
  return lab!.nodes.filter((n) => announced(kind === 'lb-class' ? n.classSpeakerLog(100_000) : n.speakerLog(100_000))).map((n) => n.name);
}

beforeAll(async () => {
  platform = await startPlatform([], '10.0.0.0/24,fd00:10:96::/112');
  await platform.startCore('address-controller');
  await platform.startDriver('metallb-iad');
  await createClass(admin(), CLASSED.name, [CLASSED.range], 'Retain', { loadBalancerClass: LB_CLASS });
  await createClass(admin(), PLAIN.name, [PLAIN.range], 'Retain');
  if (!unavailable) {
    lab = await startLab(platform, { nodes: 2, workloads: ['w1', 'w2'], lbClass: LB_CLASS });
  }
}, 600_000);

afterAll(async () => {
  if (figures.length) {
    process.stdout.write(`\nlb-class figures\n${figures.map((f) => `  ${f}`).join('\n')}\n`);
  }
  try {
    await lab?.stop();
  } finally {
    await platform?.stop();
    removeToolState();
  }
});

describe('the class’s loadBalancerClass field', () => {
  it('kubectl get ipclass shows the LBClass column and each class’s value', async () => {
    const out = await kubectl(['get', 'ipclass']);
    const [header = '', ...lines] = out.trimEnd().split('\n');
    // Columns by position: kubectl leaves a custom column empty where the field is unset.
    const at = header.indexOf('LBCLASS');
    expect(at, `no LBCLASS column in:\n${out}`).toBeGreaterThan(0);
    const next = header.slice(at).search(/\s\S/) + at + 1;
    const cell = (name: string) => lines.find((l) => l.split(/\s+/)[0] === name)?.slice(at, next).trim();
    expect(cell(CLASSED.name), out).toBe(LB_CLASS);
    expect(cell(PLAIN.name), out).toBe('');
    figures.push(`kubectl get ipclass:\n${out.trimEnd().split('\n').map((l) => `    ${l}`).join('\n')}`);
    recordScenario('lb-class: kubectl get ipclass shows LBClass');
  });

  it('is immutable: adding, changing or removing it is refused (422); an unprefixed class name is refused', async () => {
    const patch = (name: string, spec: Record<string, unknown>) =>
      admin().objects.patch(
        { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddressClass', metadata: { name }, spec } as k8s.KubernetesObject,
        undefined, undefined, 'lb-class-e2e', undefined, k8s.PatchStrategy.MergePatch,
      );
    await expectRejected(patch(CLASSED.name, { loadBalancerClass: OTHER_LB_CLASS }), 422, 'immutable');
    await expectRejected(patch(CLASSED.name, { loadBalancerClass: null }), 422, 'immutable');
    await expectRejected(patch(PLAIN.name, { loadBalancerClass: LB_CLASS }), 422, 'immutable');
    const create = admin().custom.createClusterCustomObject({
      ...crd('ipaddressclasses'),
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddressClass', metadata: { name: 'unprefixed' }, spec: { provisioner: 'metallb.drivers.local.sdn.cozystack.io', loadBalancerClass: 'public', parameters: { addresses: ['203.0.113.240/30'] } } },
    });
    await expectRejected(create, 422, 'loadBalancerClass');
    const classes = ((await admin().custom.listClusterCustomObject(crd('ipaddressclasses'))) as { items: Cr[] }).items;
    expect(Object.fromEntries(classes.map((c) => [c.metadata.name, c.spec.loadBalancerClass ?? null]))).toEqual({ [CLASSED.name]: LB_CLASS, [PLAIN.name]: null });
    recordScenario('lb-class: spec.loadBalancerClass immutable (add, change, remove: 422)');
  });
});

describe('two MetalLBs, one per load-balancer class', () => {
  let classedAddress: { name: string; address: string };
  let plainAddress: { name: string; address: string };

  it('a claim of the class waits while no MetalLB serves its load-balancer class: its placeholder carries the class and the MetalLB without --lb-class leaves it alone', async () => {
    await createClaim(admin(), 'early', { className: CLASSED.name }, NS);
    const uid = (await getClaim('early')).metadata.uid!;
    const placeholder = `iad-${uid}-v4`;
    let s: k8s.V1Service | undefined;
    await waitFor(`allocation placeholder ${placeholder}`, async () => Boolean((s = await readService(placeholder, PLACEHOLDERS).catch(() => undefined))), SETTLE);
    expect(s!.spec?.loadBalancerClass).toBe(LB_CLASS);
    await new Promise((r) => setTimeout(r, 5_000));
    s = await readService(placeholder, PLACEHOLDERS);
    expect(ingressOf(s), 'the MetalLB without --lb-class gave the class’s placeholder an IP').toEqual([]);
    expect(loadBalancerStatusWriters(s)).toEqual([]);
    expect((await getClaim('early')).status?.phase).not.toBe('Bound');
    recordScenario('lb-class: a claim waits while no MetalLB serves its load-balancer class');
  });

  it('MetalLB started with --lb-class binds it: the hold carries the class and only that MetalLB wrote its IP', async () => {
    const started = Date.now();
    lbMetallb = await platform.startMetallbController({ lbClass: LB_CLASS });
    await waitFor('claim early Bound', async () => (await getClaim('early')).status?.phase === 'Bound', SETTLE);
    figures.push(`--lb-class MetalLB started → the waiting claim Bound: ${Date.now() - started} ms`);
    classedAddress = (await getClaim('early')).status!.addresses[0];
    expect(contains(CLASSED.range, classedAddress.address)).toBe(true);
    let holds: k8s.V1Service[] = [];
    await waitFor('the hold has the IP', async () => {
      holds = await holdsOf(admin(), classedAddress.name);
      return holds.length === 1 && ingressOf(holds[0]!).join() === classedAddress.address;
    }, SETTLE);
    expect(holds[0]!.spec?.loadBalancerClass).toBe(LB_CLASS);
    expect(loadBalancerStatusWriters(holds[0]!)).toEqual([lbMetallb.fieldManager]);
    recordScenario('lb-class: the --lb-class MetalLB binds the class’s claims; its holds carry the class');
  });

  it('the class without a load-balancer class keeps working with the MetalLB without the flag', async () => {
    plainAddress = await boundClaim('plain-1', PLAIN.name);
    expect(contains(PLAIN.range, plainAddress.address)).toBe(true);
    let holds: k8s.V1Service[] = [];
    await waitFor('the plain hold has the IP', async () => {
      holds = await holdsOf(admin(), plainAddress.name);
      return holds.length === 1 && ingressOf(holds[0]!).join() === plainAddress.address;
    }, SETTLE);
    expect(holds[0]!.spec?.loadBalancerClass).toBeUndefined();
    expect(loadBalancerStatusWriters(holds[0]!)).toEqual([METALLB_FIELD_MANAGER]);
    recordScenario('lb-class: a class without loadBalancerClass served by the MetalLB without --lb-class');
  });

  it('a tenant Service of the class naming the claim attaches: the claim’s IP, Attached on the Service and the claim, associatedTo', async () => {
    if (lab) {
      const url = await lab.target(classedAddress.address);
      const a = await attach(platform, lab, url, { namespace: NS, service: 'web', workload: 'w1', claim: 'early', loadBalancerClass: LB_CLASS });
      figures.push(`attach, class ${LB_CLASS} (Service created → first answer): ${a.totalMs} ms (IP in status after ${a.assignedMs} ms)`);
      const r = await lab.client.stream(url, 'w1', { intervalMs: 50, count: 20, timeoutMs: 1_000 }).result;
      expect(r.answers, describeStream(r)).toEqual({ w1: 20 });
    } else {
      await tenantService('web', 'early', LB_CLASS);
    }
    await expectAttached('web', 'early', classedAddress);
    const web = await readService('web');
    expect(loadBalancerStatusWriters(web)).toEqual([lbMetallb.fieldManager]);
    if (lab) {
      // Announced by a speaker started with --lb-class, and by no speaker without it.
      await waitFor('an --lb-class speaker announced it', async () => announcers(classedAddress.address, 'lb-class').length === 1, 10_000);
      expect(announcers(classedAddress.address, 'default')).toEqual([]);
      const [node] = announcers(classedAddress.address, 'lb-class');
      expect(lab.neighbour(classedAddress.address)).toBe(lab.nodes.find((n) => n.name === node)!.mac());
      figures.push(`the ${LB_CLASS} attachment is announced by ${node}'s --lb-class speaker alone`);
    }
    recordScenario(`lb-class: a Service of class ${LB_CLASS} attaches its claim${lab ? ' (and answers on the data path)' : ''}`);
  });

  it('a Service with no class, or another class, naming a claim of the class is refused with LoadBalancerClassMismatch and gets nothing', async () => {
    const second = await boundClaim('second', CLASSED.name);
    await tenantService('no-class', 'second', undefined, 'w2');
    const noClass = await expectMismatch('no-class', 'second', second, [LB_CLASS]);
    await admin().core.deleteNamespacedService({ namespace: NS, name: 'no-class' });
    await tenantService('other-class', 'second', OTHER_LB_CLASS, 'w2');
    const other = await expectMismatch('other-class', 'second', second, [LB_CLASS, OTHER_LB_CLASS]);
    figures.push(`refusals: no class → "${noClass}"; ${OTHER_LB_CLASS} → "${other}"`);
    if (lab) {
      const url = await lab.target(second.address);
      const burst = await lab.client.stream(url, '(nobody)', { intervalMs: 100, count: 20, timeoutMs: 300 }).result;
      expect(burst.answers, `something answered on ${url}: ${describeStream(burst)}`).toEqual({});
    }
    recordScenario('lb-class: a Service of another load-balancer class (or none) naming the claim is refused');
  });

  it('a Service of the class naming a claim of the class without one is refused too', async () => {
    const plain2 = await boundClaim('plain-2', PLAIN.name);
    await tenantService('classed-on-plain', 'plain-2', LB_CLASS, 'w2');
    const message = await expectMismatch('classed-on-plain', 'plain-2', plain2, [LB_CLASS]);
    figures.push(`refusal: ${LB_CLASS} Service on a class without one → "${message}"`);
    recordScenario('lb-class: a classed Service naming a claim of a class without one is refused');
  });

  it('a Service with no class naming a claim of the class without one attaches, carried by the MetalLB without the flag', async () => {
    if (lab) {
      const url = await lab.target(plainAddress.address);
      const a = await attach(platform, lab, url, { namespace: NS, service: 'plain-web', workload: 'w2', claim: 'plain-1' });
      figures.push(`attach, no class (Service created → first answer): ${a.totalMs} ms (IP in status after ${a.assignedMs} ms)`);
    } else {
      await tenantService('plain-web', 'plain-1', undefined, 'w2');
    }
    await expectAttached('plain-web', 'plain-1', plainAddress);
    expect(loadBalancerStatusWriters(await readService('plain-web'))).toEqual([METALLB_FIELD_MANAGER]);
    if (lab) {
      await waitFor('a speaker without --lb-class announced it', async () => announcers(plainAddress.address, 'default').length === 1, 10_000);
      expect(announcers(plainAddress.address, 'lb-class')).toEqual([]);
    }
    recordScenario('lb-class: a Service with no class attaches a claim of the class without one');
  });

  it('neither MetalLB wrote a Service of the other’s class, and every address is accounted for', async () => {
    const services = (await admin().core.listServiceForAllNamespaces()).items;
    const wrong: string[] = [];
    for (const s of services) {
      const id = `${s.metadata!.namespace}/${s.metadata!.name} (class ${s.spec?.loadBalancerClass ?? 'none'})`;
      const writers = loadBalancerStatusWriters(s);
      if (s.spec?.loadBalancerClass === LB_CLASS ? writers.includes(METALLB_FIELD_MANAGER) : writers.includes(lbMetallb.fieldManager)) {
        wrong.push(`${id}: load-balancer status written by ${writers.join(', ')}`);
      }
      for (const ip of ingressOf(s)) {
        const range = s.spec?.loadBalancerClass === LB_CLASS ? CLASSED.range : PLAIN.range;
        if (!contains(range, ip)) {
          wrong.push(`${id}: ${ip} is outside ${range}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(services.filter((s) => loadBalancerStatusWriters(s).includes(lbMetallb.fieldManager)).length).toBeGreaterThan(0);
    await expectAccounted(admin());
    recordScenario('lb-class: neither MetalLB touched the other’s Services; ledger accounted');
  });
});
