/**
 * Bad objects an admin can make, each a case of its own on one platform (the
 * core, the driver, MetalLB v0.16.1; issue 39): a class whose own ranges
 * overlap, classes overlapping each other, duplicate IPAddresses of one IP
 * (also spelled ::ffff:a.b.c.d), spec edits of a bound claim, a class whose
 * backend is not ready, a family a class cannot serve, objects naming a class
 * that does not exist, and the objects that were always held (/32 and /128
 * classes, an unknown provisioner, an empty address list, a 253-character
 * claim name, a hand-made address pre-bound to a missing claim, one outside
 * every class, one that is no IP).
 *
 * Every case asserts what the apiserver answers, the reason the object then
 * carries (condition and Event), and that a fresh claim of a healthy class
 * still binds within 10 s; after each, its objects are deleted again, neither
 * controller may have restarted, and the ledger must add up (also with the bad
 * objects in place, before they go). Each case has its own slice of the
 * documentation ranges, so a case that fails leaves the others undisturbed.
 */
import * as k8s from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { canonicalIp } from '../../api/ip.js';
import type { ControllerProcess } from './support/controller-process.js';
import { expectRejected, GROUP, VERSION } from './support/kube.js';
import { createClaim, createClass, crd, expectAccounted, holdsOf, PLACEHOLDERS, startPlatform, type Cr, type Platform } from './support/platform.js';
import { waitFor } from './support/ports.js';
import { recordScenario } from './support/summary.js';

const NS = 'tenant-a';
/** Where the good claims of every case's last check live, apart from the cases' own. */
const PROBE_NS = 'tenant-b';
const METALLB_NS = 'cozy-metallb';
const PROVISIONER = 'metallb.drivers.local.sdn.cozystack.io';
/** The driver's annotations on an allocation placeholder, naming its claim (its contract, restated on purpose). */
const CLAIM_NAME_ANNOTATION = `${PROVISIONER}/claim-name`;
const CLAIM_NAMESPACE_ANNOTATION = `${PROVISIONER}/claim-namespace`;
const CLAIM_ANNOTATION = 'local.sdn.cozystack.io/ip-address-claim';
/** Dual-stack Services (the /128 class's placeholder is IPv6), apart from every documentation range. */
const SERVICE_CIDRS = '10.0.0.0/24,fd00:10:96::/112';
/** How long a reaction of the controllers may take: they answer in well under a second. */
const WAIT_MS = 30_000;
const GOOD_CLAIM_MS = 10_000;
/** How long to keep looking for something that must not come (an allocation, a pool). */
const STILL_MS = 3_000;
const CASE_MS = 240_000;

type Condition = { type: string; status: string; reason: string; message: string };

let platform: Platform;
const admin = () => platform.admin;
const controllers: { core?: ControllerProcess; driver?: ControllerProcess } = {};
const pools = { group: 'metallb.io', version: 'v1beta1', namespace: METALLB_NS, plural: 'ipaddresspools' };

const getClass = async (name: string) => (await admin().custom.getClusterCustomObject({ ...crd('ipaddressclasses'), name })) as Cr;
const getClaim = async (name: string, namespace = NS) => (await admin().custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace, name })) as Cr;
const getAddress = async (name: string) => (await admin().custom.getClusterCustomObject({ ...crd('ipaddresses'), name })) as Cr;
const listAddresses = async () => ((await admin().custom.listClusterCustomObject(crd('ipaddresses'))) as { items: Cr[] }).items;
const listClaims = async () => ((await admin().custom.listClusterCustomObject(crd('ipaddressclaims'))) as { items: Cr[] }).items;
const readPool = async (name: string) => (await admin().custom.getNamespacedCustomObject({ ...pools, name })) as Cr;
const conditionOf = (object: Cr, type: string) => (object.status?.conditions as Condition[] | undefined)?.find((c) => c.type === type);
const listed = (claim: Cr) => (claim.status?.addresses ?? []) as { name: string; address: string }[];
const sameIp = (ip: string) => canonicalIp(ip) ?? ip;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const is404 = (error: unknown) => error instanceof k8s.ApiException && error.code === 404;
async function exists(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return true;
  } catch (error) {
    if (is404(error)) {
      return false;
    }
    throw error;
  }
}
const ignore404 = (call: Promise<unknown>) => call.catch((error: unknown) => (is404(error) ? undefined : Promise.reject(error)));
const poolExists = (name: string) => exists(() => readPool(name));

function classBody(name: string, spec: { provisioner?: string; parameters?: Record<string, unknown>; reclaimPolicy?: 'Retain' | 'Delete' }) {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'IPAddressClass',
    metadata: { name },
    spec: { provisioner: spec.provisioner ?? PROVISIONER, reclaimPolicy: spec.reclaimPolicy ?? 'Delete', parameters: spec.parameters ?? {} },
  };
}

function createRawClass(name: string, spec: Parameters<typeof classBody>[1]): Promise<unknown> {
  return admin().custom.createClusterCustomObject({ ...crd('ipaddressclasses'), body: classBody(name, spec) });
}

/** A hand-made IPAddress, as an admin (or a restore from backup) makes one. */
function createAddress(name: string, address: string, className: string, claimRef?: { namespace: string; name: string }): Promise<unknown> {
  return admin().custom.createClusterCustomObject({
    ...crd('ipaddresses'),
    body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddress', metadata: { name }, spec: { className, address, source: { fromClass: {} }, ...(claimRef ? { claimRef } : {}) } },
  });
}

/** A JSON merge patch of one of our objects (a null deletes the field). */
function mergePatch(kind: 'IPAddressClaim' | 'IPAddressClass' | 'IPAddress', name: string, namespace: string | undefined, patch: Record<string, unknown>) {
  const { metadata, ...rest } = patch as { metadata?: Record<string, unknown> } & Record<string, unknown>;
  // KubernetesObject has no room for a spec, nor for the null a merge patch deletes with.
  const body = { ...rest, apiVersion: `${GROUP}/${VERSION}`, kind, metadata: { ...metadata, name, ...(namespace ? { namespace } : {}) } } as k8s.KubernetesObject;
  return admin().objects.patch(body, undefined, undefined, 'poison', undefined, k8s.PatchStrategy.MergePatch);
}

function tenantService(name: string, claim: string, namespace = NS): Promise<unknown> {
  return admin().core.createNamespacedService({
    namespace,
    body: { metadata: { name, namespace, annotations: { [CLAIM_ANNOTATION]: claim } }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } },
  });
}

const ingressOf = async (name: string, namespace = NS) =>
  ((await admin().core.readNamespacedService({ name, namespace })).status?.loadBalancer?.ingress ?? []).map((i) => i.ip).filter((ip): ip is string => Boolean(ip)).map(sameIp);

/** The allocation placeholders the driver made for a claim (asking MetalLB for an IP on its behalf). */
async function allocationsOf(claim: string, namespace = NS): Promise<string[]> {
  return (await admin().core.listNamespacedService({ namespace: PLACEHOLDERS })).items
    .filter((s) => s.metadata?.annotations?.[CLAIM_NAME_ANNOTATION] === claim && s.metadata.annotations[CLAIM_NAMESPACE_ANNOTATION] === namespace)
    .map((s) => s.metadata!.name!);
}

/** Waits until the object carries the condition; returns it. On a timeout, says what it carries instead. */
async function expectCondition(what: string, read: () => Promise<Cr>, type: string, status: string, reason: string, timeoutMs = WAIT_MS): Promise<Condition> {
  let last: Condition | undefined;
  try {
    await waitFor(`${what} ${type}=${status}/${reason}`, async () => {
      last = conditionOf(await read(), type);
      return last?.status === status && last.reason === reason;
    }, timeoutMs);
  } catch (error) {
    throw new Error(`${(error as Error).message}; it has ${last ? `${type}=${last.status}/${last.reason}: ${last.message}` : `no ${type} condition`}`);
  }
  return last!;
}

/** Waits until the object is in the phase. On a timeout, says which phase and conditions it has instead. */
async function expectPhase(what: string, read: () => Promise<Cr>, phase: string, timeoutMs = WAIT_MS): Promise<Cr> {
  let last: Cr | undefined;
  try {
    await waitFor(`${what} ${phase}`, async () => {
      last = await read();
      return last.status?.phase === phase;
    }, timeoutMs);
  } catch (error) {
    const conditions = ((last?.status?.conditions ?? []) as Condition[]).map((c) => `${c.type}=${c.status}/${c.reason}`).join(', ');
    throw new Error(`${(error as Error).message}; it is ${last?.status?.phase ?? 'without phase'} (${conditions || 'no conditions'})`);
  }
  return last!;
}

/** Waits until the claim is Bound; on a timeout, says where its provisioning stands (placeholders, MetalLB's and the driver's words). */
async function claimBound(name: string, namespace = NS, timeoutMs = WAIT_MS): Promise<Cr> {
  try {
    return await expectPhase(`claim ${namespace}/${name}`, () => getClaim(name, namespace), 'Bound', timeoutMs);
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${await provisioningState(name, namespace)}`);
  }
}

/** A waiting claim's provisioning, for a failure's message: its allocation placeholders with their IPs and Events, its own Events, the driver's lines on it. */
async function provisioningState(claim: string, namespace: string): Promise<string> {
  const events = async (ns: string, object: string) =>
    (await admin().core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${object}` })).items.map((e) => `${e.reason}: ${e.message}`).slice(-5);
  const lines: string[] = [];
  for (const placeholder of await allocationsOf(claim, namespace)) {
    const ingress = (await admin().core.readNamespacedService({ name: placeholder, namespace: PLACEHOLDERS })).status?.loadBalancer?.ingress?.map((i) => i.ip) ?? [];
    lines.push(`placeholder ${placeholder}: ingress ${ingress.join(',') || 'none'}; events ${JSON.stringify(await events(PLACEHOLDERS, placeholder))}`);
  }
  lines.push(`claim events ${JSON.stringify(await events(namespace, claim))}`);
  const driver = (controllers.driver?.process.tail(2_000) ?? '').split('\n').filter((l) => l.includes(claim)).slice(-8);
  lines.push(`driver: ${driver.join('\n  ') || 'nothing on it'}`);
  return lines.join('\n');
}

/** Waits for an Event on the object (cluster-scoped objects have theirs in `default`). */
async function expectEvent(namespace: string, name: string, reason: string, type: 'Warning' | 'Normal' = 'Warning', text?: string): Promise<void> {
  let seen: string[] = [];
  try {
    await waitFor(`a ${type} Event ${reason} on ${name}`, async () => {
      const events = (await admin().core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` })).items;
      seen = events.map((e) => `${e.type} ${e.reason}: ${e.message}`);
      return events.some((e) => e.reason === reason && e.type === type && (!text || (e.message ?? '').includes(text)));
    }, WAIT_MS);
  } catch (error) {
    throw new Error(`${(error as Error).message}; its Events: ${seen.join(' | ') || 'none'}`);
  }
}

/** The last step of every case: a fresh claim of a class nothing is wrong with binds within 10 s. */
let probes = 0;
async function expectGoodClaimBinds(): Promise<void> {
  const name = `probe-${++probes}`;
  await createClaim(admin(), name, { className: 'healthy' }, PROBE_NS);
  await claimBound(name, PROBE_NS, GOOD_CLAIM_MS);
}

// What a case made, undone after it (also when it failed), in reverse order.
const cleanups: { what: string; run: () => Promise<void> }[] = [];
const later = (what: string, run: () => Promise<void>) => void cleanups.push({ what, run });

/**
 * Deletes the object and waits until it is gone; if it is still there after 30 s its finalizers
 * are taken off (so the next case starts clean) and that is reported as a leak.
 */
async function removeObject(what: string, read: () => Promise<unknown>, remove: () => Promise<unknown>, unfinalize?: () => Promise<unknown>): Promise<void> {
  await ignore404(remove());
  try {
    await waitFor(`${what} gone`, async () => !(await exists(read)), WAIT_MS);
  } catch (error) {
    if (unfinalize) {
      await ignore404(unfinalize());
    }
    throw new Error(`${what} still there ${WAIT_MS / 1000} s after its deletion (${(error as Error).message}); its finalizers were taken off`);
  }
}

const unfinalized = { finalizers: null };
const removeClaim = (name: string, namespace = NS) =>
  removeObject(
    `claim ${namespace}/${name}`,
    () => getClaim(name, namespace),
    () => admin().custom.deleteNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace, name }),
    () => mergePatch('IPAddressClaim', name, namespace, { metadata: unfinalized }),
  );
const removeAddress = (name: string) =>
  removeObject(
    `IPAddress ${name}`,
    () => getAddress(name),
    () => admin().custom.deleteClusterCustomObject({ ...crd('ipaddresses'), name }),
    () => mergePatch('IPAddress', name, undefined, { metadata: unfinalized }),
  );
const removeService = (name: string, namespace = NS) =>
  removeObject(`Service ${namespace}/${name}`, () => admin().core.readNamespacedService({ name, namespace }), () => admin().core.deleteNamespacedService({ name, namespace }));
const removePool = (name: string) =>
  removeObject(`IPAddressPool ${name}`, () => readPool(name), () => admin().custom.deleteNamespacedCustomObject({ ...pools, name }));

/** A class and everything of it: its claims (any namespace), then its addresses, then the class. */
async function removeClass(name: string): Promise<void> {
  const problems: string[] = [];
  const attempt = (step: Promise<void>) => step.catch((error: Error) => void problems.push(error.message));
  for (const c of (await listClaims()).filter((c) => c.spec.className === name || c.status?.className === name)) {
    await attempt(removeClaim(c.metadata.name!, c.metadata.namespace!));
  }
  for (const a of (await listAddresses()).filter((a) => a.spec.className === name)) {
    await attempt(removeAddress(a.metadata.name!));
  }
  await attempt(removeObject(`IPAddressClass ${name}`, () => getClass(name), () => admin().custom.deleteClusterCustomObject({ ...crd('ipaddressclasses'), name })));
  if (problems.length > 0) {
    throw new Error(problems.join('; '));
  }
}

/** A class of this driver, made and removed again after the case. */
async function caseClass(name: string, addresses: string[], reclaimPolicy: 'Retain' | 'Delete' = 'Delete'): Promise<void> {
  later(`class ${name}`, () => removeClass(name));
  await createClass(admin(), name, addresses, reclaimPolicy);
}

async function servedClass(name: string, addresses: string[], reclaimPolicy: 'Retain' | 'Delete' = 'Delete'): Promise<void> {
  await caseClass(name, addresses, reclaimPolicy);
  await expectCondition(`class ${name}`, () => getClass(name), 'BackendReady', 'True', 'PoolWritten');
}

async function caseClaim(name: string, spec: Record<string, unknown>, namespace = NS): Promise<void> {
  later(`claim ${name}`, () => removeClaim(name, namespace));
  await createClaim(admin(), name, spec, namespace);
}

async function caseAddress(name: string, address: string, className: string, claimRef?: { namespace: string; name: string }): Promise<void> {
  later(`IPAddress ${name}`, () => removeAddress(name));
  await createAddress(name, address, className, claimRef);
}

async function caseService(name: string, claim: string): Promise<void> {
  later(`Service ${name}`, () => removeService(name));
  await tenantService(name, claim);
}

/** Neither controller may have exited; one that did is started again (so the next cases run) and reported. */
async function controllersStillRunning(): Promise<string[]> {
  const reports: string[] = [];
  for (const kind of ['core', 'driver'] as const) {
    const c = controllers[kind]!;
    const child = c.process.process;
    if (child.exitCode !== null || child.signalCode !== null) {
      reports.push(`the ${kind} (pid ${child.pid}) exited (${child.exitCode ?? child.signalCode}); its log ends:\n${c.process.tail(20)}`);
      controllers[kind] = kind === 'core' ? await platform.startCore(`address-controller-${Date.now()}`) : await platform.startDriver(`metallb-iad-${Date.now()}`);
    }
  }
  return reports;
}

beforeAll(async () => {
  platform = await startPlatform([], SERVICE_CIDRS);
  controllers.core = await platform.startCore('address-controller');
  controllers.driver = await platform.startDriver('metallb-iad');
  await createClass(admin(), 'healthy', ['203.0.113.192/26'], 'Delete');
  await expectCondition('class healthy', () => getClass('healthy'), 'BackendReady', 'True', 'PoolWritten', 60_000);
}, 600_000);

afterEach(async () => {
  const problems: string[] = [];
  for (const { what, run } of cleanups.splice(0).reverse()) {
    await run().catch((error: Error) => problems.push(`cleanup of ${what}: ${error.message}`));
  }
  problems.push(...(await controllersStillRunning()));
  await expectAccounted(admin()).catch((error: Error) => problems.push(`after the cleanup: ${error.message}`));
  if (problems.length > 0) {
    throw new Error(problems.join('\n'));
  }
}, 300_000);

afterAll(async () => {
  await platform?.stop();
});

describe('1: a class whose own ranges overlap, and classes overlapping each other', () => {
  it('1a: two overlapping CIDRs in one class are refused at admission (422 naming parameters.addresses)', async () => {
    const body = classBody('bad-cidrs', { parameters: { addresses: ['198.51.100.224/28', '198.51.100.232/29'] } });
    later('class bad-cidrs', () => removeClass('bad-cidrs')); // were it admitted, MetalLB would stop applying configuration
    const create = (dryRun?: 'All') => admin().custom.createClusterCustomObject({ ...crd('ipaddressclasses'), body, dryRun });
    // The apiserver loads a policy a moment after helm made it: a dry run asks until it is in force
    // (or 30 s have passed; the real request below then says what the apiserver answers).
    await waitFor('the class-ranges admission policy in force', async () => {
      try {
        await create('All');
        return false;
      } catch (error) {
        return error instanceof k8s.ApiException && error.code === 422;
      }
    }, WAIT_MS).catch(() => undefined);
    await expectRejected(create(), 422, 'parameters.addresses');
    expect(await exists(() => getClass('bad-cidrs'))).toBe(false);
    await expectGoodClaimBinds();
    await expectAccounted(admin());
    recordScenario('poison 1a: a class with two overlapping CIDRs refused at admission');
  }, CASE_MS);

  it('1b: a class overlapping itself through an a-b range is admitted, refused by the driver (OverlappingRanges) with no pool, and a class made after it is served', async () => {
    await servedClass('first', ['203.0.113.0/28']);
    await caseClaim('c0', { className: 'first' });
    await claimBound('c0');
    // (a) CEL's cidr library cannot read an a-b range: admission lets it through, the driver must not.
    await caseClass('bad', ['198.51.100.0/28', '198.51.100.8-198.51.100.15']);
    // (b)
    const refused = await expectCondition('class bad', () => getClass('bad'), 'BackendReady', 'False', 'OverlappingRanges');
    expect(refused.message).toContain('parameters.addresses[0] "198.51.100.0/28"');
    expect(refused.message).toContain('parameters.addresses[1] "198.51.100.8-198.51.100.15"');
    await expectEvent('default', 'bad', 'OverlappingRanges');
    expect(await poolExists('iad-bad')).toBe(false);
    // MetalLB keeps applying configuration: a class made after the bad one is served.
    await servedClass('second', ['192.0.2.0/28']);
    await caseClaim('c1', { className: 'second' });
    await claimBound('c1');
    await expectCondition('class second', () => getClass('second'), 'MetalLBConfigured', 'True', 'ConfigurationValid');
    expect((await getClaim('c0')).status?.phase).toBe('Bound');
    expect(await poolExists('iad-bad')).toBe(false);
    await expectGoodClaimBinds();
    await expectAccounted(admin());
    recordScenario('poison 1b: a self-overlapping class refused by the driver, later classes served');
  }, CASE_MS);

  it('1c: of two overlapping classes the later is refused (OverlappingClassParameters) naming the other class and both ranges', async () => {
    await servedClass('older', ['198.51.100.32/28']);
    await caseClass('younger', ['198.51.100.40/29']);
    const refused = await expectCondition('class younger', () => getClass('younger'), 'BackendReady', 'False', 'OverlappingClassParameters');
    expect(refused.message).toContain('IPAddressClass "older"');
    expect(refused.message).toContain('"198.51.100.40/29"');
    expect(refused.message).toContain('"198.51.100.32/28"');
    await expectEvent('default', 'younger', 'OverlappingClassParameters');
    expect(await poolExists('iad-younger')).toBe(false);
    expect(conditionOf(await getClass('older'), 'BackendReady')?.reason).toBe('PoolWritten');
    await caseClaim('o1', { className: 'older' });
    await claimBound('o1');
    await expectGoodClaimBinds();
    await expectAccounted(admin());
    recordScenario('poison 1c: the later of two overlapping classes refused, naming the other');
  }, CASE_MS);

  it('1d: an older class edited to overlap a younger class with bound addresses is refused; the younger keeps its pool, nothing is rewritten', async () => {
    await servedClass('elder', ['198.51.100.64/28']);
    await servedClass('junior', ['198.51.100.96/28']);
    await caseClaim('j1', { className: 'junior' });
    const j1 = listed(await claimBound('j1'))[0]!;
    const [elderPool, juniorPool] = [await readPool('iad-elder'), await readPool('iad-junior')];
    // (a) the edit itself is a valid class (one CIDR): admitted.
    await mergePatch('IPAddressClass', 'elder', undefined, { spec: { parameters: { addresses: ['198.51.100.64/26'] } } });
    // (b)
    const refused = await expectCondition('class elder', () => getClass('elder'), 'BackendReady', 'False', 'OverlappingClassParameters');
    expect(refused.message).toContain('IPAddressClass "junior"');
    await expectEvent('default', 'elder', 'OverlappingClassParameters');
    await sleep(STILL_MS);
    expect((await readPool('iad-elder')).metadata.resourceVersion, 'the elder pool is kept untouched').toBe(elderPool.metadata.resourceVersion);
    expect((await readPool('iad-junior')).metadata.resourceVersion, 'the junior pool is kept untouched').toBe(juniorPool.metadata.resourceVersion);
    expect(conditionOf(await getClass('junior'), 'BackendReady')?.reason).toBe('PoolWritten');
    await expectCondition('class junior', () => getClass('junior'), 'MetalLBConfigured', 'True', 'ConfigurationValid');
    expect((await getAddress(j1.name)).status?.phase).toBe('Bound');
    expect(listed(await getClaim('j1'))).toEqual([j1]);
    await caseClaim('j2', { className: 'junior' });
    await claimBound('j2');
    await expectGoodClaimBinds();
    await expectAccounted(admin());
    recordScenario('poison 1d: an older class edited onto a younger bound class refused; the younger keeps its pool');
  }, CASE_MS);
});

describe('2: one IP, one IPAddress', () => {
  it('2a: dup-a, dup-b (192.0.2.131) and dup-c (::ffff:192.0.2.131): one claim is bound to that IP, the later two are Conflict naming dup-a, one Service carries it', async () => {
    await servedClass('hand', ['192.0.2.128/29']);
    // (a) nothing in the schema stops an admin, or a restore from backup, making these.
    await caseAddress('dup-a', '192.0.2.131', 'hand');
    await caseAddress('dup-b', '192.0.2.131', 'hand');
    await caseAddress('dup-c', '::ffff:192.0.2.131', 'hand');
    const claims = ['h1', 'h2', 'h3'];
    for (const name of claims) {
      await caseClaim(name, { className: 'hand' });
      await caseService(`svc-${name}`, name);
    }
    // (b)
    for (const name of ['dup-b', 'dup-c']) {
      await expectPhase(`IPAddress ${name}`, () => getAddress(name), 'Conflict');
      const unique = await expectCondition(`IPAddress ${name}`, () => getAddress(name), 'Unique', 'False', 'DuplicateIP');
      expect(unique.message).toContain('dup-a');
      await expectEvent('default', name, 'DuplicateIP', 'Warning', 'dup-a');
    }
    // The address of the IP: never said to be a duplicate (docs/binding.md: Unique appears once it has been False).
    expect(conditionOf(await getAddress('dup-a'), 'Unique')?.status ?? 'True').toBe('True');
    // There is room for all three: the two without 192.0.2.131 get other addresses of the class.
    const bound: Cr[] = [];
    for (const name of claims) {
      bound.push(await claimBound(name, NS, 60_000));
    }
    const ips = bound.map((c) => listed(c).map((a) => sameIp(a.address)));
    expect(ips.every((l) => l.length === 1), `each claim lists one address: ${JSON.stringify(ips)}`).toBe(true);
    expect(ips.flat().filter((ip) => ip === '192.0.2.131'), `claims bound to 192.0.2.131: ${JSON.stringify(ips)}`).toHaveLength(1);
    expect(new Set(ips.flat()).size).toBe(3);
    const holder = bound.find((c) => sameIp(listed(c)[0]!.address) === '192.0.2.131')!;
    expect(listed(holder)[0]!.name).toBe('dup-a');
    for (const name of ['dup-b', 'dup-c']) {
      expect((await listClaims()).filter((c) => listed(c).some((a) => a.name === name)).map((c) => c.metadata.name)).toEqual([]);
      expect(await holdsOf(admin(), name)).toEqual([]);
      expect((await getAddress(name)).status?.phase).toBe('Conflict');
    }
    // Each Service gets its claim's IP; one Service in the cluster carries 192.0.2.131.
    for (const [i, name] of claims.entries()) {
      await waitFor(`svc-${name} carries ${ips[i]![0]}`, async () => (await ingressOf(`svc-${name}`)).includes(ips[i]![0]!), 60_000);
    }
    await waitFor('one Service carries 192.0.2.131', async () => {
      const carriers = (await admin().core.listServiceForAllNamespaces()).items.filter((s) => (s.status?.loadBalancer?.ingress ?? []).some((i) => i.ip && sameIp(i.ip) === '192.0.2.131'));
      return carriers.length === 1 && carriers[0]!.metadata?.name === `svc-${holder.metadata.name}`;
    }, WAIT_MS);
    await expectGoodClaimBinds();
    await expectAccounted(admin());
    recordScenario('poison 2a: three IPAddresses of one IP: one binding, two Conflict');
  }, CASE_MS);

  it('2b: once the first IPAddress of an IP is gone, its duplicate (::ffff:192.0.2.137) becomes the address of that IP and binds', async () => {
    await servedClass('hand2', ['192.0.2.136/29'], 'Retain');
    await caseAddress('first-x', '192.0.2.137', 'hand2');
    await caseAddress('twin-x', '::ffff:192.0.2.137', 'hand2');
    await expectCondition('IPAddress twin-x', () => getAddress('twin-x'), 'Unique', 'False', 'DuplicateIP');
    await caseClaim('r1', { className: 'hand2' });
    expect(listed(await claimBound('r1')).map((a) => a.name)).toEqual(['first-x']);
    await removeClaim('r1');
    await expectPhase('IPAddress first-x', () => getAddress('first-x'), 'Released');
    await removeAddress('first-x');
    await expectCondition('IPAddress twin-x', () => getAddress('twin-x'), 'Unique', 'True', 'Unique');
    await expectPhase('IPAddress twin-x', () => getAddress('twin-x'), 'Available');
    await caseClaim('r2', { className: 'hand2' });
    const r2 = listed(await claimBound('r2'));
    expect(r2.map((a) => a.name)).toEqual(['twin-x']);
    await expectGoodClaimBinds();
    await expectAccounted(admin());
    recordScenario('poison 2b: the duplicate becomes the address of its IP once the first is gone');
  }, CASE_MS);

  it('2c: a duplicate pre-bound to a claim is not its binding: the claim says DuplicateAddress and lists nothing', async () => {
    await servedClass('hand3', ['192.0.2.144/29']);
    await caseClaim('p0', { className: 'hand3' });
    const [first] = listed(await claimBound('p0'));
    await caseAddress('pre-dup', first!.address, 'hand3', { namespace: NS, name: 'p1' });
    await expectPhase('IPAddress pre-dup', () => getAddress('pre-dup'), 'Conflict');
    const unique = await expectCondition('IPAddress pre-dup', () => getAddress('pre-dup'), 'Unique', 'False', 'DuplicateIP');
    expect(unique.message).toContain(first!.name);
    await caseClaim('p1', { className: 'hand3' });
    await expectCondition('claim p1', () => getClaim('p1'), 'Bound', 'False', 'DuplicateAddress');
    const p1 = await getClaim('p1');
    expect(p1.status?.phase).not.toBe('Bound');
    expect(listed(p1)).toEqual([]);
    expect((await getAddress('pre-dup')).spec.claimRef?.uid ?? '').toBe('');
    expect(listed(await getClaim('p0'))).toEqual([first]);
    expect((await getAddress(first!.name)).status?.phase).toBe('Bound');
    await expectGoodClaimBinds();
    await expectAccounted(admin());
    recordScenario('poison 2c: a pre-bound duplicate is no binding: DuplicateAddress');
  }, CASE_MS);
});

describe('3: a bound claim’s spec is immutable (422 naming the field)', () => {
  const edits = [
    { claim: 'm-class', field: 'spec.className', patches: [{ className: 'elsewhere' }, { className: null }] },
    { claim: 'm-family', field: 'spec.family', patches: [{ family: 'IPv6' }, { family: 'Dual' }] },
    { claim: 'm-name', field: 'spec.addressName', patches: [{ addressName: 'ip-198-51-100-140' }] },
  ] as const;
  const before = new Map<string, Cr>();

  beforeAll(async () => {
    await createClass(admin(), 'mutable', ['198.51.100.128/28'], 'Delete');
    await createClass(admin(), 'elsewhere', ['198.51.100.144/28'], 'Delete');
    for (const { claim } of edits) {
      await createClaim(admin(), claim, { className: 'mutable', family: 'IPv4' });
      before.set(claim, await claimBound(claim, NS, 60_000));
    }
  }, 180_000);

  afterAll(async () => {
    await removeClass('mutable');
    await removeClass('elsewhere');
  }, 180_000);

  for (const { claim, field, patches } of edits) {
    it(`3: ${field} of a bound claim cannot change${field === 'spec.className' ? ' or be removed' : ''}`, async () => {
      for (const spec of patches) {
        await expectRejected(mergePatch('IPAddressClaim', claim, NS, { spec }), 422, field);
      }
      // (b) nothing moved: the claim reads as it did, Bound to the same address.
      const now = await getClaim(claim);
      const was = before.get(claim)!;
      expect(now.spec).toEqual(was.spec);
      expect(now.status?.phase).toBe('Bound');
      expect(now.status?.className).toBe('mutable');
      expect(listed(now)).toEqual(listed(was));
      await expectGoodClaimBinds();
      await expectAccounted(admin());
      recordScenario(`poison 3: ${field} of a bound claim refused`);
    }, CASE_MS);
  }
});

describe('4: a claim says why it waits; an address of a missing class says so', () => {
  it('4a: a claim of a class whose backend is not ready (OverlapsForeignPool) says BackendNotReady, reserves nothing, and binds once the pool is written', async () => {
    later('IPAddressPool legacy-4a', () => removePool('legacy-4a'));
    await admin().custom.createNamespacedCustomObject({
      ...pools,
      body: { apiVersion: 'metallb.io/v1beta1', kind: 'IPAddressPool', metadata: { name: 'legacy-4a', namespace: METALLB_NS }, spec: { addresses: ['203.0.113.128/28'], autoAssign: false } },
    });
    await caseClass('blocked', ['203.0.113.136/29']);
    await expectCondition('class blocked', () => getClass('blocked'), 'BackendReady', 'False', 'OverlapsForeignPool');
    await caseClaim('b1', { className: 'blocked' });
    const waiting = await expectCondition('claim b1', () => getClaim('b1'), 'Provisioned', 'False', 'BackendNotReady');
    expect(waiting.message).toContain('blocked');
    expect(waiting.message).toContain('OverlapsForeignPool');
    await expectEvent(NS, 'b1', 'BackendNotReady');
    await sleep(STILL_MS);
    expect(await allocationsOf('b1'), 'allocation placeholders of b1').toEqual([]);
    expect((await getClaim('b1')).status?.phase).toBe('Pending');
    // The admin's pool goes: the class is served, and the waiting claim is woken.
    await removePool('legacy-4a');
    await expectCondition('class blocked', () => getClass('blocked'), 'BackendReady', 'True', 'PoolWritten');
    await claimBound('b1');
    await waitFor('b1 no longer says Provisioned=False', async () => conditionOf(await getClaim('b1'), 'Provisioned') === undefined, WAIT_MS);
    await expectGoodClaimBinds();
    await expectAccounted(admin());
    recordScenario('poison 4a: BackendNotReady said on the claim, nothing reserved, bound once the pool is written');
  }, CASE_MS);

  it('4b: a Dual claim on a class with IPv4 ranges only says FamilyNotServed and reserves nothing of either family', async () => {
    await servedClass('v4only', ['192.0.2.160/29']);
    await caseClaim('d1', { className: 'v4only', family: 'Dual' });
    const waiting = await expectCondition('claim d1', () => getClaim('d1'), 'Provisioned', 'False', 'FamilyNotServed');
    expect(waiting.message).toContain('v4only');
    expect(waiting.message).toContain('IPv6');
    await expectEvent(NS, 'd1', 'FamilyNotServed');
    await sleep(STILL_MS);
    expect(await allocationsOf('d1'), 'allocation placeholders of d1').toEqual([]);
    expect((await listAddresses()).filter((a) => a.spec.claimRef?.name === 'd1').map((a) => a.metadata.name), 'addresses recorded for d1').toEqual([]);
    expect((await getClaim('d1')).status?.phase).toBe('Pending');
    await expectGoodClaimBinds();
    await expectAccounted(admin());
    recordScenario('poison 4b: a Dual claim on an IPv4-only class says FamilyNotServed, takes no IPv4');
  }, CASE_MS);

  it('4c (held: a family the class lacks): an IPv6 claim on an IPv4-only class says FamilyNotServed, not ClassExhausted', async () => {
    await servedClass('v4only-b', ['192.0.2.168/29']);
    await caseClaim('v6c', { className: 'v4only-b', family: 'IPv6' });
    const waiting = await expectCondition('claim v6c', () => getClaim('v6c'), 'Provisioned', 'False', 'FamilyNotServed');
    expect(waiting.message).toContain('v4only-b');
    expect(waiting.message).toContain('IPv6');
    await expectEvent(NS, 'v6c', 'FamilyNotServed');
    await sleep(STILL_MS);
    expect(await allocationsOf('v6c'), 'allocation placeholders of v6c').toEqual([]);
    expect((await getClaim('v6c')).status?.phase).toBe('Pending');
    await expectGoodClaimBinds();
    await expectAccounted(admin());
    recordScenario('poison 4c: an IPv6 claim on an IPv4-only class says FamilyNotServed');
  }, CASE_MS);

  it('4d: an IPAddress naming a class that does not exist says ClassResolved=False/ClassNotFound, phase unchanged', async () => {
    await caseAddress('nowhere', '198.51.100.200', 'nope');
    const unresolved = await expectCondition('IPAddress nowhere', () => getAddress('nowhere'), 'ClassResolved', 'False', 'ClassNotFound');
    expect(unresolved.message).toContain('IPAddressClass "nope" not found');
    await expectEvent('default', 'nowhere', 'ClassNotFound');
    await expectPhase('IPAddress nowhere', () => getAddress('nowhere'), 'Available', STILL_MS);
    expect(await holdsOf(admin(), 'nowhere')).toEqual([]);
    await expectGoodClaimBinds();
    await expectAccounted(admin());
    recordScenario('poison 4d: an IPAddress of a missing class says ClassNotFound');
  }, CASE_MS);
});

describe('held: the bad objects that were always handled, kept so', () => {
  it('held: a /32 class binds its one address; a second claim says ClassExhausted', async () => {
    await servedClass('one4', ['203.0.113.64/32']);
    await caseClaim('s4', { className: 'one4' });
    expect(listed(await claimBound('s4')).map((a) => sameIp(a.address))).toEqual(['203.0.113.64']);
    expect(conditionOf(await getClaim('s4'), 'Bound')?.reason).toBe('Bound');
    await caseClaim('s4-more', { className: 'one4' });
    await expectCondition('claim s4-more', () => getClaim('s4-more'), 'Provisioned', 'False', 'ClassExhausted');
    await expectGoodClaimBinds();
    await expectAccounted(admin());
    recordScenario('poison held: a /32 class');
  }, CASE_MS);

  it('held: a /128 class binds its one IPv6 address', async () => {
    await servedClass('one6', ['2001:db8:0:128::1/128']);
    await caseClaim('s6', { className: 'one6', family: 'IPv6' });
    expect(listed(await claimBound('s6')).map((a) => sameIp(a.address))).toEqual(['2001:db8:0:128::1']);
    await expectGoodClaimBinds();
    await expectAccounted(admin());
    recordScenario('poison held: a /128 class');
  }, CASE_MS);

  it('held: a class of an unknown provisioner: the driver leaves it alone, its claim waits for that provisioner', async () => {
    later('class other-driver', () => removeClass('other-driver'));
    await createRawClass('other-driver', { provisioner: 'example.com/other-driver', parameters: { addresses: ['198.51.100.208/29'] } });
    await caseClaim('u1', { className: 'other-driver' });
    const waiting = await expectCondition('claim u1', () => getClaim('u1'), 'Bound', 'False', 'WaitingForProvisioning');
    expect(waiting.message).toContain('example.com/other-driver');
    expect(conditionOf(await getClaim('u1'), 'ClassResolved')?.status).toBe('True');
    await sleep(STILL_MS);
    expect(conditionOf(await getClass('other-driver'), 'BackendReady')).toBeUndefined();
    expect(await poolExists('iad-other-driver')).toBe(false);
    expect(await allocationsOf('u1')).toEqual([]);
    await expectGoodClaimBinds();
    await expectAccounted(admin());
    recordScenario('poison held: an unknown provisioner');
  }, CASE_MS);

  it('held: a class with an empty address list is InvalidClassParameters with no pool; its claim says BackendNotReady', async () => {
    later('class empty', () => removeClass('empty'));
    await createRawClass('empty', { parameters: { addresses: [] } });
    const invalid = await expectCondition('class empty', () => getClass('empty'), 'BackendReady', 'False', 'InvalidClassParameters');
    expect(invalid.message).toContain('parameters.addresses');
    await expectEvent('default', 'empty', 'InvalidClassParameters');
    expect(await poolExists('iad-empty')).toBe(false);
    await caseClaim('e1', { className: 'empty' });
    const waiting = await expectCondition('claim e1', () => getClaim('e1'), 'Provisioned', 'False', 'BackendNotReady');
    expect(waiting.message).toContain('empty');
    expect(waiting.message).toContain('InvalidClassParameters');
    await sleep(STILL_MS);
    expect(await allocationsOf('e1')).toEqual([]);
    await expectGoodClaimBinds();
    await expectAccounted(admin());
    recordScenario('poison held: an empty address list');
  }, CASE_MS);

  it('held: a claim of a class that does not exist says ClassNotFound and reserves nothing', async () => {
    await caseClaim('n1', { className: 'absent' });
    const unresolved = await expectCondition('claim n1', () => getClaim('n1'), 'ClassResolved', 'False', 'ClassNotFound');
    expect(unresolved.message).toContain('IPAddressClass "absent" not found');
    await expectEvent(NS, 'n1', 'ClassNotFound');
    expect((await getClaim('n1')).status?.phase).toBe('Pending');
    await sleep(STILL_MS);
    expect(await allocationsOf('n1')).toEqual([]);
    await expectGoodClaimBinds();
    await expectAccounted(admin());
    recordScenario('poison held: a missing class');
  }, CASE_MS);

  it('held: a claim with a 253-character name, attached to a Service, gives the Service its IP', async () => {
    const name = `long-${'x'.repeat(248)}`;
    expect(name).toHaveLength(253);
    await servedClass('longname', ['198.51.100.160/29']);
    await caseClaim(name, { className: 'longname' });
    const [address] = listed(await claimBound(name));
    await caseService('svc-long', name);
    await waitFor('svc-long carries the claim’s IP', async () => (await ingressOf('svc-long')).includes(sameIp(address!.address)), WAIT_MS);
    await waitFor('the address associated to svc-long', async () => (await getAddress(address!.name)).status?.associatedTo?.name === 'svc-long', WAIT_MS);
    await expectGoodClaimBinds();
    await expectAccounted(admin());
    recordScenario('poison held: a 253-character claim name');
  }, CASE_MS);

  describe('hand-made IPAddresses of a served class', () => {
    beforeAll(async () => {
      await createClass(admin(), 'handmade', ['198.51.100.176/29'], 'Retain');
    });

    afterAll(async () => {
      await removeClass('handmade');
    }, 180_000);

    it('held: one pre-bound to a claim that does not exist is Released, and held', async () => {
      await caseAddress('prebound', '198.51.100.177', 'handmade', { namespace: NS, name: 'ghost' });
      await expectPhase('IPAddress prebound', () => getAddress('prebound'), 'Released');
      await expectEvent('default', 'prebound', 'Reclaimed', 'Normal');
      await waitFor('prebound held by a placeholder carrying its IP', async () =>
        (await holdsOf(admin(), 'prebound')).some((s) => (s.status?.loadBalancer?.ingress ?? []).some((i) => i.ip === '198.51.100.177')), WAIT_MS);
      expect(await exists(() => getClaim('ghost'))).toBe(false);
      await expectGoodClaimBinds();
      await expectAccounted(admin());
      recordScenario('poison held: a hand-made address pre-bound to a missing claim');
    }, CASE_MS);

    it('held: one outside every class is Lost', async () => {
      await caseAddress('stray', '198.51.100.250', 'handmade');
      await expectPhase('IPAddress stray', () => getAddress('stray'), 'Lost');
      await expectEvent('default', 'stray', 'Lost');
      await expectGoodClaimBinds();
      await expectAccounted(admin());
      recordScenario('poison held: an address outside every class');
    }, CASE_MS);

    it('held: one that is no IP is InvalidAddress and never bound', async () => {
      await caseAddress('not-an-ip', 'not-an-ip', 'handmade');
      await expectEvent('default', 'not-an-ip', 'InvalidAddress');
      expect((await getAddress('not-an-ip')).status?.phase).toBe('Pending');
      await expectGoodClaimBinds();
      await expectAccounted(admin());
      recordScenario('poison held: an address that is no IP');
    }, CASE_MS);
  });
});
