/**
 * A control plane with MetalLB's controller, the two packages installed by
 * helm, and controller processes started on demand: shared by the suites that
 * run the whole system.
 */
import { mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { holdersOf, METALLB_PROVISIONER, requestedFamilies, type IPAddressStatus } from '../../../api/v1alpha1/index.js';
import { canonicalIp, familyOf } from '../../../api/ip.js';
import { systemPackageDir } from '../../support/synth.js';
import { binaries } from './binaries.js';
import { ADMIN, startCluster, type Cluster } from './cluster.js';
import { startController, type ControllerProcess } from './controller-process.js';
import { apis, GROUP, VERSION } from './kube.js';
import { freePort, waitFor } from './ports.js';
import { installAsOperator, replicateCozystackValues } from './operator.js';
import { start, type Started } from './processes.js';
import { API_ADVERTISE_ADDRESS } from './lab/plan.js';

export const CORE_SA = 'system:serviceaccount:cozy-address-controller:address-controller';
export const DRIVER_SA = 'system:serviceaccount:cozy-metallb-iad:metallb-iad';
export const PLACEHOLDERS = 'cozy-metallb-iad';
/** MetalLB's namespace: its controllers' and speakers' configuration, and the classes' pools. */
export const METALLB_NAMESPACE = 'cozy-metallb';
const METALLB_POD = 'metallb-controller';
/**
 * The field manager the platform's MetalLB controller writes under (the apiserver names a writer
 * that gives none by its user agent's program name: the binary's file name).
 */
export const METALLB_FIELD_MANAGER = 'metallb-controller';
/** The label linking a placeholder to the IPAddress it holds (the driver's contract, restated on purpose). */
export const LINK_LABEL = 'metallb.drivers.local.sdn.cozystack.io/ip-address';

/** Where the Pod objects standing in for MetalLB's controllers are bound: no node of that name ever runs. */
const STAND_IN_NODE = 'metallb-stand-in';

export type Cr = { metadata: k8s.V1ObjectMeta; spec: Record<string, any>; status?: Record<string, any> }; // any: CR JSON
export const crd = (plural: string) => ({ group: GROUP, version: VERSION, plural });

export interface Platform {
  readonly cluster: Cluster;
  readonly admin: ReturnType<typeof apis>;
  readonly metallb: Started;
  startCore(instance: string, leaderElect?: boolean, bundled?: boolean): Promise<ControllerProcess>;
  startDriver(instance: string, leaderElect?: boolean, bundled?: boolean): Promise<ControllerProcess>;
  /**
   * A further MetalLB controller beside the platform's, in the same namespace, started with
   * `--lb-class=<lbClass>`: it handles only Services whose spec.loadBalancerClass is `lbClass`
   * (and the platform's, started without the flag, only Services with no class). Stopped with
   * the platform.
   */
  startMetallbController(options: { lbClass: string; name?: string }): Promise<MetallbController>;
  stop(): Promise<void>;
}

/** A MetalLB controller started with --lb-class. */
export interface MetallbController {
  readonly process: Started;
  readonly lbClass: string;
  /** What managedFields name its writes by: its binary is started under this name, so its writes tell from the platform controller's. */
  readonly fieldManager: string;
}

/** The packages startPlatform installs, by release name. */
export type PackageRelease = 'address-controller' | 'metallb-iad';

export interface PlatformOptions {
  /** A package's component values (the HelmRelease's spec.values), layered over cozystack-values. */
  readonly values?: Partial<Record<PackageRelease, Record<string, unknown>>>;
  /** Keep the apiserver's audit log of writes (Cluster.auditLog): who wrote what. @default false */
  readonly auditLog?: boolean;
  /**
   * Pods run (a lab started with `kubelet`): the packages' Deployments become the controllers, and
   * no controller process is started by the suite. @default false
   */
  readonly pods?: boolean;
}

export async function startPlatform(
  extraUsers: { name: string; groups: string[] }[] = [],
  serviceClusterIpRange?: string,
  options: PlatformOptions = {},
): Promise<Platform> {
  const bin = binaries();
  const cluster = await startCluster({
    controllerManager: true,
    serviceClusterIpRange,
    auditLog: options.auditLog,
    pods: options.pods ? { advertiseAddress: API_ADVERTISE_ADDRESS } : undefined,
    users: [
      { name: CORE_SA, groups: ['system:serviceaccounts'] },
      { name: DRIVER_SA, groups: ['system:serviceaccounts'] },
      ...extraUsers,
    ],
  });
  const admin = apis(cluster.client(ADMIN));
  // What follows the cluster's start: a failure here stops the cluster too (no test's afterAll
  // can, having no platform), or its etcd and apiserver outlive the run.
  let metallb: Started;
  try {
    for (const name of ['cozy-address-controller', 'cozy-metallb-iad', 'cozy-metallb', 'tenant-a', 'tenant-b']) {
      await admin.core.createNamespace({ body: { metadata: { name } } });
    }
    for (const file of readdirSync(bin.metallbCrds).sort()) {
      for (const doc of parseAllDocuments(readFileSync(join(bin.metallbCrds, file), 'utf8'))) {
        const object = doc.toJS();
        if (object) {
          await admin.objects.create(object);
        }
      }
    }
    for (const [release, namespace] of [['address-controller', 'cozy-address-controller'], ['metallb-iad', 'cozy-metallb-iad']] as const) {
      await replicateCozystackValues(admin.core, namespace);
      await installAsOperator(admin.core, cluster.kubeconfig(), {
        release,
        namespace,
        chartDir: packageChartDir(release),
        values: options.values?.[release],
      });
    }
    if (options.pods) {
      // ServiceAccount admission needs the namespace's `default` ServiceAccount for the Pod below.
      await waitFor('the default ServiceAccount of cozy-metallb', async () => (await admin.core.listNamespacedServiceAccount({ namespace: 'cozy-metallb' })).items.some((sa) => sa.metadata?.name === 'default'));
    }
    // MetalLB >= v0.16 reads its own Pod at startup (owner of its ConfigurationState);
    // a Pod object that never runs stands in for it (bound to no real node, so no kubelet tries).
    await admin.core.createNamespacedPod({
      namespace: 'cozy-metallb',
      body: { metadata: { name: METALLB_POD }, spec: { nodeName: STAND_IN_NODE, containers: [{ name: 'controller', image: 'quay.io/metallb/controller:v0.16.1' }] } },
    });
    metallb = start('metallb-controller', bin.metallbController, [
      `--kubeconfig=${cluster.kubeconfig()}`,
      '--namespace=cozy-metallb',
      `--pod-name=${METALLB_POD}`,
      '--webhook-mode=disabled',
      `--port=${await freePort()}`,
      // Its health probe defaults to :17472 on every interface: a second platform beside this one
      // (a soak next to the suite) would fail to bind it.
      `--health-probe-port=${await freePort()}`,
    ], cluster.dir);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  const controllers: ControllerProcess[] = [];
  const metallbs: Started[] = [];
  const election = (namespace: string, on: boolean) => (on ? ['--leader-elect', `--leader-election-namespace=${namespace}`] : []);
  return {
    cluster,
    admin,
    metallb,
    async startCore(instance, leaderElect = false, bundled = false) {
      const c = await startController('address-controller', cluster.kubeconfig(CORE_SA), cluster.dir, election('cozy-address-controller', leaderElect), instance, bundled);
      controllers.push(c);
      return c;
    },
    async startDriver(instance, leaderElect = false, bundled = false) {
      const c = await startController(
        'metallb-iad',
        cluster.kubeconfig(DRIVER_SA),
        cluster.dir,
        ['--metallb-namespace=cozy-metallb', `--placeholder-namespace=${PLACEHOLDERS}`, ...election('cozy-metallb-iad', leaderElect)],
        instance,
        bundled,
      );
      controllers.push(c);
      return c;
    },
    async startMetallbController({ lbClass, name }) {
      const id = name ?? `metallb-controller-${lbClass.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')}`.slice(0, 63);
      // Its own Pod object (the owner of what it writes), as for the platform's controller.
      await admin.core.createNamespacedPod({
        namespace: METALLB_NAMESPACE,
        body: { metadata: { name: id }, spec: { nodeName: STAND_IN_NODE, containers: [{ name: 'controller', image: 'quay.io/metallb/controller:v0.16.1' }] } },
      });
      // Started through a link named after it: client-go's user agent, and so the field manager
      // of its writes, is the program's file name.
      const binDir = join(cluster.dir, 'bin');
      mkdirSync(binDir, { recursive: true });
      const command = join(binDir, id);
      symlinkSync(bin.metallbController, command);
      const healthPort = await freePort();
      const p = start(id, command, [
        `--kubeconfig=${cluster.kubeconfig()}`,
        `--namespace=${METALLB_NAMESPACE}`,
        `--pod-name=${id}`,
        '--webhook-mode=disabled',
        `--port=${await freePort()}`,
        `--health-probe-port=${healthPort}`,
        `--lb-class=${lbClass}`,
      ], cluster.dir);
      metallbs.push(p);
      await waitFor(`${id} /readyz (${p.tail(5)})`, async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).ok, 60_000);
      return { process: p, lbClass, fieldManager: id };
    },
    async stop() {
      for (const c of controllers.reverse()) {
        await c.process.stop();
      }
      for (const m of metallbs.reverse()) {
        await m.stop();
      }
      await metallb.stop();
      await cluster.stop();
    },
  };
}

/** A package's wrapper chart, as synthesized. */
export function packageChartDir(release: PackageRelease): string {
  return systemPackageDir(release);
}

export async function createClass(
  admin: Platform['admin'],
  name: string,
  addresses: string[],
  reclaimPolicy: 'Retain' | 'Delete' = 'Retain',
  /** More of the class's spec, e.g. `{ loadBalancerClass: 'example.com/public' }`. */
  spec: Record<string, unknown> = {},
): Promise<void> {
  await admin.custom.createClusterCustomObject({
    ...crd('ipaddressclasses'),
    body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddressClass', metadata: { name }, spec: { provisioner: 'metallb.drivers.local.sdn.cozystack.io', reclaimPolicy, ...spec, parameters: { addresses } } },
  });
}

/**
 * How a class is announced (docs/driver.md, "Announcing"): a merge patch of its
 * parameters.advertisement, so no write races the driver's status writes;
 * undefined takes it away (L2, the default).
 */
export async function setAdvertisement(admin: Platform['admin'], className: string, advertisement: Record<string, unknown> | undefined): Promise<void> {
  await admin.custom.patchClusterCustomObject(
    { ...crd('ipaddressclasses'), name: className, body: { spec: { parameters: { advertisement: advertisement ?? null } } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
}

export function createClaim(admin: Platform['admin'], name: string, spec: Record<string, unknown> = { className: 'public' }, namespace = 'tenant-a') {
  return admin.custom.createNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace, body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddressClaim', metadata: { name, namespace }, spec } });
}

/** The placeholders holding an IPAddress. */
export async function holdsOf(admin: Platform['admin'], addressName: string): Promise<k8s.V1Service[]> {
  return (await admin.core.listNamespacedService({ namespace: PLACEHOLDERS, labelSelector: `${LINK_LABEL}=${addressName}` })).items;
}

/** Waits for the ledger to settle with nothing lost or double-booked; throws naming what does not add up. */
export async function expectAccounted(admin: Platform['admin']): Promise<void> {
  let problems: string[] = [];
  try {
    await waitFor('the ledger to settle', async () => {
      problems = (await auditLedger(admin)).problems;
      return problems.length === 0;
    }, 60_000);
  } catch (error) {
    throw new Error(`the ledger does not add up: ${problems.join('; ') || (error as Error).message}`);
  }
}

/** An IP as one text whatever its spelling (`::ffff:192.0.2.131` is `192.0.2.131`); a text that is no IP as it is. */
const sameIpText = (ip: string) => canonicalIp(ip) ?? ip;

/**
 * The order of the IPAddresses of one IP (docs/binding.md, restated here on purpose): the earliest by
 * creationTimestamp, then by name, is the address of that IP; every later one is a duplicate.
 */
function earlierFirst(a: Cr, b: Cr): number {
  const at = (x: Cr) => {
    const t = new Date(x.metadata.creationTimestamp ?? '').getTime();
    return Number.isNaN(t) ? Number.POSITIVE_INFINITY : t;
  };
  const [x, y] = [at(a), at(b)];
  return x !== y ? x - y : a.metadata.name! < b.metadata.name! ? -1 : a.metadata.name! > b.metadata.name! ? 1 : 0;
}

/** Waits until the ledger adds up (auditLedger finds no problem); fails naming what does not. */
export async function expectLedgerClean(admin: Platform['admin'], timeoutMs = 60_000): Promise<void> {
  let problems: string[] = [];
  await waitFor('the ledger to add up', async () => {
    problems = (await auditLedger(admin)).problems;
    return problems.length === 0;
  }, timeoutMs).catch(() => {
    throw new Error(`the ledger does not add up: ${problems.join('; ')}`);
  });
}

/**
 * Everything the ledger says, and what does not add up: each item is an address lost or
 * double-booked, or an IP bound twice (two IPAddresses of one IP, compared as an address, both
 * out of Conflict or both listed by claims; one IP listed by two claims; a duplicate Bound or listed).
 */
export async function auditLedger(admin: Platform['admin']): Promise<{ problems: string[]; bound: number }> {
  const claims = ((await admin.custom.listClusterCustomObject(crd('ipaddressclaims'))) as { items: Cr[] }).items;
  const addresses = ((await admin.custom.listClusterCustomObject(crd('ipaddresses'))) as { items: Cr[] }).items;
  const classes = ((await admin.custom.listClusterCustomObject(crd('ipaddressclasses'))) as { items: Cr[] }).items;
  const services = (await admin.core.listServiceForAllNamespaces()).items;
  const problems: string[] = [];
  const ingressOf = (s: k8s.V1Service) => (s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip).filter((ip): ip is string => Boolean(ip)).map(sameIpText);
  const ipOwners = new Map<string, string[]>();
  for (const s of services) {
    for (const ip of ingressOf(s)) {
      ipOwners.set(ip, [...(ipOwners.get(ip) ?? []), `${s.metadata!.namespace}/${s.metadata!.name}`]);
    }
  }
  // Several Services on one IP are a Shared claim's carriers only when its address names each of them.
  const sharers = new Map<string, Set<string>>();
  for (const a of addresses) {
    const names = holdersOf(a.status as IPAddressStatus | undefined)
      .filter((h) => h.kind === 'Service')
      .map((h) => `${h.namespace}/${h.name}`);
    const ip = canonicalIp(a.spec.address);
    if (ip !== undefined && names.length > 1) {
      sharers.set(ip, new Set(names));
    }
  }
  for (const [ip, owners] of ipOwners) {
    if (owners.length > 1 && !owners.every((o) => sharers.get(ip)?.has(o))) {
      problems.push(`${ip} is assigned to ${owners.join(' and ')}`);
    }
  }
  // One IP, one binding. Which claims list each address (by name), and each IP (as an address).
  const claimKeyOf = (c: Cr) => `${c.metadata.namespace}/${c.metadata.name}`;
  const listedBy = new Map<string, string[]>();
  const listingIp = new Map<string, Set<string>>();
  for (const c of claims) {
    for (const listed of (c.status?.addresses ?? []) as { name: string; address: string }[]) {
      listedBy.set(listed.name, [...(listedBy.get(listed.name) ?? []), claimKeyOf(c)]);
      const ip = sameIpText(listed.address);
      listingIp.set(ip, (listingIp.get(ip) ?? new Set()).add(claimKeyOf(c)));
    }
  }
  for (const [ip, listing] of listingIp) {
    if (listing.size > 1) {
      problems.push(`${ip} is bound twice: claims ${[...listing].join(' and ')} each list it`);
    }
  }
  const byIp = new Map<string, Cr[]>();
  for (const a of addresses) {
    const ip = canonicalIp(a.spec.address);
    if (ip !== undefined) {
      byIp.set(ip, [...(byIp.get(ip) ?? []), a]);
    }
  }
  const duplicates = new Set<string>();
  for (const [ip, same] of byIp) {
    if (same.length < 2) {
      continue;
    }
    const [first, ...later] = [...same].sort(earlierFirst);
    const describe = (list: Cr[]) => list.map((a) => `${a.metadata.name} (${a.spec.address}, ${a.status?.phase ?? 'no phase'})`).join(' and ');
    const outOfConflict = same.filter((a) => a.status?.phase !== 'Conflict');
    if (outOfConflict.length > 1) {
      problems.push(`${ip} is bound twice: ${outOfConflict.length} IPAddresses of it are out of phase Conflict: ${describe(outOfConflict)}`);
    }
    const listed = same.filter((a) => listedBy.has(a.metadata.name!));
    if (listed.length > 1) {
      problems.push(`${ip} is bound twice: ${listed.length} IPAddresses of it are listed by claims: ${listed.map((a) => `${a.metadata.name} (by ${listedBy.get(a.metadata.name!)!.join(', ')})`).join(' and ')}`);
    }
    for (const d of later) {
      duplicates.add(d.metadata.name!);
      if (d.status?.phase === 'Bound' || listedBy.has(d.metadata.name!)) {
        const how = [d.status?.phase === 'Bound' ? 'Bound' : '', listedBy.has(d.metadata.name!) ? `listed by ${listedBy.get(d.metadata.name!)!.join(', ')}` : ''].filter(Boolean).join(' and ');
        problems.push(`${d.metadata.name} (${d.spec.address}) duplicates ${first!.metadata.name}, which has ${ip} first, yet it is ${how}`);
      }
    }
  }
  // A claim is its UID, not its name: the Released address of a deleted claim and a new claim of
  // the same name are two claims. An empty claimRef UID is a driver's pre-binding, which the core
  // completes for the live claim of that name (docs/binding.md), so it counts as that claim's.
  const liveUid = new Map(claims.map((c) => [claimKeyOf(c), c.metadata.uid!]));
  const perClaim = new Map<string, { claim: string; family: string; n: number }>();
  // The MetalLB driver reserves the addresses of the classes it serves, each IP once: an address
  // of no such class, one that is no IP, a Lost one and a duplicate have no reservation to keep.
  const served = new Set(classes.filter((c) => c.spec.provisioner === METALLB_PROVISIONER && !c.metadata.deletionTimestamp).map((c) => c.metadata.name!));
  for (const a of addresses) {
    const ref = a.spec.claimRef;
    const duplicate = duplicates.has(a.metadata.name!);
    if (ref && !duplicate) {
      const claim = `${ref.namespace}/${ref.name}`;
      const uid = ref.uid || liveUid.get(claim);
      // One address per family per claim: a Dual claim holds two, one of each. A pre-binding to
      // a claim that does not exist counts for that name alone.
      const family = familyOf(a.spec.address) ?? 'no family';
      const key = `${uid ?? `no uid: ${claim}`} (${family})`;
      perClaim.set(key, { claim: `${claim} (uid ${uid ?? 'none'})`, family, n: (perClaim.get(key)?.n ?? 0) + 1 });
    }
    const reserved = served.has(a.spec.className) && canonicalIp(a.spec.address) !== undefined && a.status?.phase !== 'Lost' && !duplicate;
    if (!reserved) {
      continue;
    }
    const held = services.some((s) => s.metadata?.namespace === PLACEHOLDERS && s.metadata.labels?.[LINK_LABEL] === a.metadata.name);
    const to = a.status?.associatedTo;
    if (!held && !to) {
      problems.push(`${a.metadata.name} is neither held nor associated`);
    }
    if (!(ipOwners.get(sameIpText(a.spec.address))?.length)) {
      problems.push(`${a.metadata.name} (${a.spec.address}) is reserved in MetalLB by nothing`);
    }
  }
  // A placeholder MetalLB gave an IP to must back an IPAddress of that IP: anything else is an
  // allocation made twice, or one left behind.
  const byName = new Map(addresses.map((a) => [a.metadata.name!, a]));
  for (const s of services.filter((s) => s.metadata?.namespace === PLACEHOLDERS)) {
    for (const ip of ingressOf(s)) {
      const linked = byName.get(s.metadata!.labels?.[LINK_LABEL] ?? '');
      if (!linked || sameIpText(linked.spec.address) !== ip) {
        problems.push(`placeholder ${s.metadata!.name} holds ${ip} for no IPAddress of that IP`);
      }
    }
  }
  for (const c of claims) {
    const key = claimKeyOf(c);
    for (const family of requestedFamilies(c.spec.family) ?? []) {
      const n = perClaim.get(`${c.metadata.uid} (${family})`)?.n ?? 0;
      if (c.status?.phase === 'Bound' && n !== 1) {
        problems.push(`claim ${key} is Bound with ${n} ${family} addresses`);
      }
    }
  }
  for (const { claim, family, n } of perClaim.values()) {
    if (n > 1) {
      problems.push(`claim ${claim} holds ${n} ${family} addresses`);
    }
  }
  return { problems, bound: claims.filter((c) => c.status?.phase === 'Bound').length };
}
