/**
 * Adoption (docs/adoption.md): brings the live addresses of LoadBalancer
 * Services into the claim model without renumbering. A class takes over the
 * admin's IPAddressPool (spec.parameters.pool); each Service's IP becomes an
 * IPAddress pre-bound to a generated claim of the Service's name, associated
 * with the Service, which is then annotated with the claim as a tenant would.
 *
 * A subcommand of the driver's image, so that an admin needs no checkout: the
 * chart's opt-in Job runs it in the cluster (values `adoption`), and from a
 * workstation it is the same code:
 *
 *   metallb-iad adopt --class NAME --pool POOL (--all | --namespace NS... | --service NS/NAME...)
 *   metallb-iad adopt --class NAME --undo
 *   [--dry-run]  print the plan and write nothing
 *   [--kubeconfig FILE] [--metallb-namespace metallb-system] [--timeout SECONDS]
 *
 * Without --kubeconfig it uses $KUBECONFIG, ~/.kube/config, or inside a Pod
 * the in-cluster configuration (the projected ServiceAccount token).
 *
 * All or nothing: any Service that cannot be adopted is refused with one line
 * and nothing is written. Rerunning converges (every step is recognised by the
 * objects' names and adoption's markers), so an interrupted run is finished by
 * running it again.
 *
 * Exit codes (lib/errors.ts): 0 done, 1 refused or a wait ran out, 2 bad input.
 */
import * as k8s from '@kubernetes/client-node';
import {
  API_VERSION,
  GROUP,
  IP_ADDRESS_CLAIM_ANNOTATION,
  VERSION,
  type IPAddress,
  type IPAddressClaim,
  type IPAddressClass,
} from '../../../api/v1alpha1/index.js';
import { isDnsLabel } from '../../../api/names.js';
import { parseRange, rangeContains } from '../../../api/ip.js';
import { apiMessage, isAlreadyExists, isConflict, isNotFound } from '../../runtime/kube.js';
import type { MetallbObject } from '../store.js';
import { ingressIps, pinnedAs } from '../services.js';
import { PLACEHOLDER_LABEL, SERVED_BY_CLASS_ANNOTATION } from '../well-known.js';
import { InputError, parseArgs, toolParser, ToolError } from '../../../lib/cli.js';
import {
  ADOPTED_FROM_ANNOTATION,
  ADOPTED_LABEL,
  adoptionClass,
  heldIps,
  planAdoption,
  planUndo,
  restoredKeys,
  SERVICE_BEFORE_ANNOTATION,
  type ServiceAdoption,
  type ServiceRestore,
} from './plan.js';

/**
 * Called after each write with what was written; a test stops the run there
 * (throws) to prove that a rerun finishes what an interrupted run started.
 */
export type Step = (what: string) => void;

const crd = (plural: string) => ({ group: GROUP, version: VERSION, plural });
const POOLS = { group: 'metallb.io', version: 'v1beta1', plural: 'ipaddresspools' };
const POLL_MS = 250;
/** Services adopted at once: each waits on the driver, so a few in flight keep it busy without a burst. */
const IN_FLIGHT = 4;

export interface AdoptOptions {
  readonly className: string;
  readonly pool?: string;
  readonly all: boolean;
  readonly namespaces: readonly string[];
  readonly services: readonly string[];
  readonly undo: boolean;
  readonly dryRun: boolean;
  readonly metallbNamespace: string;
  readonly timeoutMs: number;
  readonly kubeconfig?: string;
}

interface Clients {
  readonly core: k8s.CoreV1Api;
  readonly custom: k8s.CustomObjectsApi;
}

/** `what`: the API's own message, on one line. */
async function api<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new ToolError([`${what}: ${apiMessage(error)}`]);
  }
}

const orUndefined = <T>(promise: Promise<T>): Promise<T | undefined> => promise.catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));

async function waitUntil(what: string, timeoutMs: number, check: () => Promise<boolean | string>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: boolean | string = false;
  for (;;) {
    last = await check();
    if (last === true) {
      return;
    }
    if (Date.now() > deadline) {
      throw new ToolError([`timed out after ${Math.round(timeoutMs / 1000)}s waiting for ${what}${typeof last === 'string' ? ` (${last})` : ''}; run the same command again to go on`]);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Runs `work` over `items`, `IN_FLIGHT` at a time; the first failure stops the rest from starting. */
async function inFlight<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: unknown;
  const worker = async () => {
    while (next < items.length && failed === undefined) {
      const item = items[next++]!;
      await work(item).catch((error: unknown) => {
        failed ??= error;
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, items.length) }, worker));
  if (failed !== undefined) {
    throw failed;
  }
}

class Cluster {
  constructor(
    private readonly clients: Clients,
    private readonly options: AdoptOptions,
  ) {}

  pool(name: string): Promise<MetallbObject | undefined> {
    const { custom } = this.clients;
    return api(`reading IPAddressPool ${name}`, () =>
      orUndefined(custom.getNamespacedCustomObject({ ...POOLS, namespace: this.options.metallbNamespace, name }) as Promise<MetallbObject>),
    );
  }

  ipClass(name: string): Promise<IPAddressClass | undefined> {
    return api(`reading IPAddressClass ${name}`, () =>
      orUndefined(this.clients.custom.getClusterCustomObject({ ...crd('ipaddressclasses'), name }) as Promise<IPAddressClass>),
    );
  }

  async addresses(): Promise<IPAddress[]> {
    const list = await api('listing IPAddresses', () => this.clients.custom.listClusterCustomObject(crd('ipaddresses')));
    return (list as { items: IPAddress[] }).items;
  }

  address(name: string): Promise<IPAddress | undefined> {
    return api(`reading IPAddress ${name}`, () =>
      orUndefined(this.clients.custom.getClusterCustomObject({ ...crd('ipaddresses'), name }) as Promise<IPAddress>),
    );
  }

  claim(namespace: string, name: string): Promise<IPAddressClaim | undefined> {
    return api(`reading IPAddressClaim ${namespace}/${name}`, () =>
      orUndefined(this.clients.custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace, name }) as Promise<IPAddressClaim>),
    );
  }

  async claims(namespace: string): Promise<IPAddressClaim[]> {
    const list = await api(`listing IPAddressClaims in ${namespace}`, () => this.clients.custom.listNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace }));
    return (list as { items: IPAddressClaim[] }).items;
  }

  service(namespace: string, name: string): Promise<k8s.V1Service | undefined> {
    return api(`reading Service ${namespace}/${name}`, () => orUndefined(this.clients.core.readNamespacedService({ namespace, name })));
  }

  async quotas(namespace: string): Promise<k8s.V1ResourceQuota[]> {
    return (await api(`listing ResourceQuotas in ${namespace}`, () => this.clients.core.listNamespacedResourceQuota({ namespace }))).items;
  }

  /** The Services the flags name. --service names must exist; --namespace and --all take LoadBalancers only. */
  async selected(pool: MetallbObject | undefined): Promise<k8s.V1Service[]> {
    const { core } = this.clients;
    const { all, namespaces, services } = this.options;
    const found = new Map<string, k8s.V1Service>();
    const add = (s: k8s.V1Service) => {
      if (s.metadata?.labels?.[PLACEHOLDER_LABEL] === undefined) {
        found.set(`${s.metadata!.namespace}/${s.metadata!.name}`, s);
      }
    };
    for (const id of services) {
      const [namespace, name] = id.split('/') as [string, string];
      const service = await this.service(namespace, name);
      if (!service) {
        throw new ToolError([`${id}: Service not found`]);
      }
      add(service);
    }
    for (const namespace of namespaces) {
      const list = await api(`listing Services in ${namespace}`, () => core.listNamespacedService({ namespace }));
      list.items.filter((s) => s.spec?.type === 'LoadBalancer').forEach(add);
    }
    if (all && pool) {
      const ranges = (pool.spec?.addresses ?? []).map(parseRange).filter((r) => typeof r !== 'string');
      const list = await api('listing Services', () => core.listServiceForAllNamespaces());
      list.items.filter((s) => ingressIps(s).some((ip) => ranges.some((r) => rangeContains(r, ip)))).forEach(add);
    }
    return [...found.values()].sort((a, b) => `${a.metadata!.namespace}/${a.metadata!.name}`.localeCompare(`${b.metadata!.namespace}/${b.metadata!.name}`));
  }
}

/** Adopts every selected Service, or refuses them all; `say` gets the plan and the outcome, a line each. */
export async function adopt(clients: Clients, options: AdoptOptions, say: (line: string) => void, step: Step = () => {}): Promise<void> {
  const cluster = new Cluster(clients, options);
  const poolName = options.pool!;
  const [pool, ipClass, addresses] = await Promise.all([cluster.pool(poolName), cluster.ipClass(options.className), cluster.addresses()]);
  const services = await cluster.selected(pool);
  const namespaces = [...new Set(services.map((s) => s.metadata!.namespace!))];
  const claims = new Map<string, IPAddressClaim>();
  const quotas = new Map<string, k8s.V1ResourceQuota[]>();
  for (const namespace of namespaces) {
    for (const claim of await cluster.claims(namespace)) {
      claims.set(`${namespace}/${claim.metadata.name}`, claim);
    }
    quotas.set(namespace, await cluster.quotas(namespace));
  }
  const byName = new Map(addresses.map((a) => [a.metadata.name!, a]));
  const plan = planAdoption({
    className: options.className,
    poolName,
    metallbNamespace: options.metallbNamespace,
    pool,
    ipClass,
    services,
    claim: (namespace, name) => claims.get(`${namespace}/${name}`),
    address: (name) => byName.get(name),
    quotas: (namespace) => quotas.get(namespace) ?? [],
  });
  if (!plan.ok) {
    throw new ToolError([...plan.refusals, `nothing adopted: ${plan.refusals.length} refusal${plan.refusals.length === 1 ? '' : 's'}`]);
  }
  const pending = plan.adoptions.filter((a) => !a.complete);
  say(`${plan.createClass ? 'create' : 'keep'} IPAddressClass ${options.className}, taking over IPAddressPool ${options.metallbNamespace}/${poolName}`);
  for (const a of plan.adoptions) {
    const objects = a.addressNames.join(', ');
    say(`${a.complete ? 'adopted already' : 'adopt'} ${a.namespace}/${a.name}: ${a.ips.join(', ')} → IPAddressClaim ${a.namespace}/${a.claimName} (${a.family}; IPAddress ${objects})`);
  }
  if (options.dryRun) {
    say(`dry run: nothing written (${pending.length} to adopt, ${plan.adoptions.length - pending.length} adopted already)`);
    return;
  }
  if (plan.createClass) {
    await api(`creating IPAddressClass ${options.className}`, () =>
      clients.custom.createClusterCustomObject({ ...crd('ipaddressclasses'), body: adoptionClass(options.className, poolName) }).catch((e: unknown) => {
        if (!isAlreadyExists(e)) {
          throw e;
        }
      }),
    );
    step(`class ${options.className}`);
  }
  // The pool is the class's before anything names it: autoAssign off, so MetalLB hands none of it out anew.
  await waitUntil(`metallb-iad to take over IPAddressPool ${poolName}`, options.timeoutMs, async () => {
    const current = await cluster.pool(poolName);
    return (current?.metadata.annotations?.[SERVED_BY_CLASS_ANNOTATION] === options.className && current.spec?.autoAssign === false) || 'is metallb-iad running?';
  });
  const started = Date.now();
  await inFlight(pending, (a) => adoptService(clients, cluster, options, a, step));
  say(`adopted ${pending.length} Service${pending.length === 1 ? '' : 's'} in ${((Date.now() - started) / 1000).toFixed(1)}s (${plan.adoptions.length - pending.length} adopted already)`);
}

/**
 * One Service, in the order that never lets the driver or MetalLB see the IP
 * unheld or misattributed: the IPAddress pre-bound to the claim and recording
 * the Service's keys; its association with the Service (so the Service reads
 * as authorized, not as a Conflict); the claim; then the annotation, on which
 * the driver pins what the Service already carries.
 */
async function adoptService(clients: Clients, cluster: Cluster, options: AdoptOptions, a: ServiceAdoption, step: Step): Promise<void> {
  const id = `${a.namespace}/${a.name}`;
  const marks = { labels: { [ADOPTED_LABEL]: 'true' }, annotations: { [ADOPTED_FROM_ANNOTATION]: id } };
  for (const [i, name] of a.addressNames.entries()) {
    const body: IPAddress = {
      apiVersion: API_VERSION,
      kind: 'IPAddress',
      metadata: { name, labels: marks.labels, annotations: { ...marks.annotations, [SERVICE_BEFORE_ANNOTATION]: JSON.stringify(a.before) } },
      spec: {
        className: options.className,
        address: a.ips[i]!,
        reclaimPolicy: 'Retain',
        claimRef: { namespace: a.namespace, name: a.claimName },
        source: { fromClass: {} },
      },
    };
    await api(`${id}: creating IPAddress ${name}`, () =>
      clients.custom.createClusterCustomObject({ ...crd('ipaddresses'), body }).catch((e: unknown) => (isAlreadyExists(e) ? undefined : Promise.reject(e))),
    );
    step(`${id} address ${name}`);
    await associate(clients, cluster, id, name, { kind: 'Service', namespace: a.namespace, name: a.name });
    step(`${id} associated ${name}`);
  }
  const claim: IPAddressClaim = {
    apiVersion: API_VERSION,
    kind: 'IPAddressClaim',
    metadata: { name: a.claimName, namespace: a.namespace, ...marks },
    spec: { className: options.className, family: a.family },
  };
  await api(`${id}: creating IPAddressClaim ${a.claimName}`, () =>
    clients.custom
      .createNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: a.namespace, body: claim })
      .catch((e: unknown) => (isAlreadyExists(e) ? undefined : Promise.reject(e))),
  );
  step(`${id} claim`);
  await waitUntil(`IPAddressClaim ${a.namespace}/${a.claimName} to be Bound`, options.timeoutMs, async () => {
    const current = await cluster.claim(a.namespace, a.claimName);
    return current?.status?.phase === 'Bound' || `it is ${current?.status?.phase ?? 'Pending'}; is address-controller running?`;
  });
  await annotate(clients, cluster, a);
  step(`${id} annotated`);
  const pin = a.ips.join(',');
  await waitUntil(`metallb-iad to pin ${pin} on Service ${id}`, options.timeoutMs, async () => {
    const service = await cluster.service(a.namespace, a.name);
    if (!service) {
      return 'the Service is gone';
    }
    return (pinnedAs(service, pin) && heldIps(service).join(',') === pin) || 'not pinned yet';
  });
}

/** Writes `associatedTo` on the address's status, reading again on a 409. */
async function associate(clients: Clients, cluster: Cluster, id: string, name: string, to: { kind: string; namespace: string; name: string }): Promise<void> {
  for (;;) {
    const address = await cluster.address(name);
    if (!address) {
      throw new ToolError([`${id}: IPAddress ${name} vanished while being adopted`]);
    }
    const at = address.status?.associatedTo;
    if (at?.kind === to.kind && at.namespace === to.namespace && at.name === to.name) {
      return;
    }
    try {
      await clients.custom.replaceClusterCustomObjectStatus({ ...crd('ipaddresses'), name, body: { ...address, status: { ...address.status, associatedTo: to } } });
      return;
    } catch (error) {
      if (!isConflict(error)) {
        throw new ToolError([`${id}: recording IPAddress ${name}'s association: ${apiMessage(error)}`]);
      }
    }
  }
}

/** Annotates the Service with its claim, as a tenant would; reading again on a 409. */
async function annotate(clients: Clients, cluster: Cluster, a: ServiceAdoption): Promise<void> {
  const id = `${a.namespace}/${a.name}`;
  for (;;) {
    const service = await cluster.service(a.namespace, a.name);
    if (!service) {
      throw new ToolError([`${id}: Service deleted while being adopted; IPAddressClaim ${id} keeps its address`]);
    }
    const named = service.metadata?.annotations?.[IP_ADDRESS_CLAIM_ANNOTATION];
    if (named === a.claimName) {
      return;
    }
    if (named) {
      throw new ToolError([`${id}: annotated with IPAddressClaim ${named} meanwhile; left as it is`]);
    }
    const body = { ...service, metadata: { ...service.metadata, annotations: { ...service.metadata?.annotations, [IP_ADDRESS_CLAIM_ANNOTATION]: a.claimName } } };
    try {
      await clients.core.replaceNamespacedService({ namespace: a.namespace, name: a.name, body });
      return;
    } catch (error) {
      if (!isConflict(error)) {
        throw new ToolError([`${id}: annotating with IPAddressClaim ${a.claimName}: ${apiMessage(error)}`]);
      }
    }
  }
}

/**
 * Undo of a class's adoption: the class goes first, so the driver gives the
 * pool back as it was (every Service admitted again) before any Service loses
 * its carrier label; then each Service gets its keys back in one write (its IP
 * stays: the pool admits it); then the generated claims and addresses go.
 */
export async function undo(clients: Clients, options: AdoptOptions, say: (line: string) => void, step: Step = () => {}): Promise<void> {
  const cluster = new Cluster(clients, options);
  const ipClass = await cluster.ipClass(options.className);
  const addresses = (await cluster.addresses()).filter((a) => a.spec.className === options.className);
  const services = new Map<string, k8s.V1Service>();
  const ids = new Set(
    addresses.flatMap((a) => {
      const to = a.status?.associatedTo;
      return [a.metadata.annotations?.[ADOPTED_FROM_ANNOTATION], to?.kind === 'Service' ? `${to.namespace}/${to.name}` : undefined];
    }),
  );
  for (const id of [...ids].filter((i): i is string => Boolean(i))) {
    const [namespace, name] = id.split('/') as [string, string];
    const service = await cluster.service(namespace, name);
    if (service) {
      services.set(id, service);
    }
  }
  const plan = planUndo({ className: options.className, ipClass, addresses, service: (namespace, name) => services.get(`${namespace}/${name}`) });
  if (!plan.ok) {
    throw new ToolError([...plan.refusals, 'nothing undone']);
  }
  if (plan.deleteClass) {
    say(`delete IPAddressClass ${options.className}; its pool is given back as it was`);
  }
  for (const r of plan.restores) {
    say(`restore Service ${r.namespace}/${r.name}: ${describeKeys(r)}`);
  }
  say(`delete ${plan.claims.length} IPAddressClaim${plan.claims.length === 1 ? '' : 's'} and ${plan.addresses.length} IPAddress${plan.addresses.length === 1 ? '' : 'es'} made by adoption`);
  if (options.dryRun) {
    say('dry run: nothing written');
    return;
  }
  const started = Date.now();
  if (plan.deleteClass) {
    await api(`deleting IPAddressClass ${options.className}`, () =>
      orUndefined(clients.custom.deleteClusterCustomObject({ ...crd('ipaddressclasses'), name: options.className })),
    );
    step(`class ${options.className} deleted`);
  }
  await waitUntil(`metallb-iad to give back the pool of ${options.className}`, options.timeoutMs, async () => {
    const pools = (await api('listing IPAddressPools', () => clients.custom.listNamespacedCustomObject({ ...POOLS, namespace: options.metallbNamespace }))) as {
      items: MetallbObject[];
    };
    const held = pools.items.find((p) => p.metadata.annotations?.[SERVED_BY_CLASS_ANNOTATION] === options.className);
    return !held || `IPAddressPool ${held.metadata.name} is still served by it; is metallb-iad running?`;
  });
  await inFlight(plan.restores, async (r) => {
    await restore(clients, cluster, r);
    step(`${r.namespace}/${r.name} restored`);
  });
  for (const ref of plan.claims) {
    const claim = await cluster.claim(ref.namespace, ref.name);
    if (claim?.metadata.labels?.[ADOPTED_LABEL] === 'true') {
      await api(`deleting IPAddressClaim ${ref.namespace}/${ref.name}`, () =>
        orUndefined(clients.custom.deleteNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: ref.namespace, name: ref.name })),
      );
      step(`claim ${ref.namespace}/${ref.name} deleted`);
    }
  }
  for (const name of plan.addresses) {
    await api(`deleting IPAddress ${name}`, () => orUndefined(clients.custom.deleteClusterCustomObject({ ...crd('ipaddresses'), name })));
    step(`address ${name} deleted`);
  }
  await waitUntil('the adopted claims and addresses to be gone', options.timeoutMs, async () => {
    const left = (await cluster.addresses()).filter((a) => plan.addresses.includes(a.metadata.name!)).length;
    return left === 0 || `${left} IPAddress${left === 1 ? '' : 'es'} left`;
  });
  say(`undone in ${((Date.now() - started) / 1000).toFixed(1)}s`);
}

function describeKeys(r: ServiceRestore): string {
  const parts = [...Object.entries(r.before.annotations), ...Object.entries(r.before.labels)].map(([k, v]) => (v === null ? `-${k}` : `${k}=${v}`));
  return parts.join(' ');
}

async function restore(clients: Clients, cluster: Cluster, r: ServiceRestore): Promise<void> {
  const id = `${r.namespace}/${r.name}`;
  for (;;) {
    const service = await cluster.service(r.namespace, r.name);
    const body = service && restoredKeys(service, r.before);
    if (!body) {
      return;
    }
    try {
      await clients.core.replaceNamespacedService({ namespace: r.namespace, name: r.name, body });
      return;
    } catch (error) {
      if (!isConflict(error)) {
        throw new ToolError([`${id}: restoring its annotations: ${apiMessage(error)}`]);
      }
    }
  }
}

export function parseOptions(argv: readonly string[]): AdoptOptions | undefined {
  const parser = toolParser('metallb-iad adopt', argv, '--class NAME (--pool POOL (--all | --namespace NS... | --service NS/NAME...) | --undo) [--dry-run]')
    .option('class', { type: 'string', describe: 'The IPAddressClass that serves the adopted addresses (made if absent)' })
    .option('pool', { type: 'string', describe: "The admin's IPAddressPool the class takes over" })
    .option('all', { type: 'boolean', default: false, describe: 'Every Service holding an address of the pool' })
    .option('namespace', { type: 'string', array: true, default: [], describe: 'Every LoadBalancer Service of this namespace (repeatable, or comma-separated)' })
    .option('service', { type: 'string', array: true, default: [], describe: 'This Service, as namespace/name (repeatable, or comma-separated)' })
    .option('undo', { type: 'boolean', default: false, describe: "Undo the class's adoption: Services as they were, generated objects gone" })
    .option('dry-run', { type: 'boolean', default: false, describe: 'Print the plan; write nothing' })
    .option('kubeconfig', { type: 'string', describe: 'Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in a Pod its ServiceAccount)' })
    .option('metallb-namespace', { type: 'string', default: 'metallb-system', describe: "MetalLB's namespace, as the driver's flag" })
    .option('timeout', { type: 'number', default: 120, describe: 'Seconds to wait for each step of the controllers' });
  const args = parseArgs(parser, argv);
  if (!args) {
    return undefined;
  }
  const className = args.class;
  if (!className || !isDnsLabel(className)) {
    throw new InputError(`--class must name an IPAddressClass (a DNS label), got ${JSON.stringify(className ?? '')}`);
  }
  // Repeated, or comma-separated as the chart's Job passes them.
  const namespaces = args.namespace.flatMap((n) => String(n).split(','));
  const services = args.service.flatMap((s) => String(s).split(','));
  for (const namespace of namespaces) {
    if (!isDnsLabel(namespace)) {
      throw new InputError(`--namespace must name namespaces, got ${JSON.stringify(namespace)}`);
    }
  }
  if (args.undo) {
    if (args.pool || args.all || namespaces.length > 0 || services.length > 0) {
      throw new InputError('--undo takes the whole class: give it --class alone');
    }
  } else {
    if (!args.pool || !isDnsLabel(args.pool)) {
      throw new InputError(`--pool must name an IPAddressPool, got ${JSON.stringify(args.pool ?? '')}`);
    }
    if (!args.all && namespaces.length === 0 && services.length === 0) {
      throw new InputError('select Services: --all, --namespace NS or --service NS/NAME');
    }
  }
  for (const id of services) {
    const [namespace, name, extra] = id.split('/');
    if (!namespace || !name || extra !== undefined) {
      throw new InputError(`--service ${id}: give it as namespace/name`);
    }
  }
  if (!(args.timeout > 0)) {
    throw new InputError(`--timeout must be a positive number of seconds, got ${args.timeout}`);
  }
  return {
    className,
    pool: args.pool,
    all: args.all,
    namespaces,
    services,
    undo: args.undo,
    dryRun: args['dry-run'],
    metallbNamespace: args['metallb-namespace'],
    timeoutMs: args.timeout * 1000,
    ...(args.kubeconfig ? { kubeconfig: args.kubeconfig } : {}),
  };
}

export function clientsFor(kubeconfig: string | undefined): Clients {
  const config = new k8s.KubeConfig();
  if (kubeconfig) {
    config.loadFromFile(kubeconfig);
  } else {
    config.loadFromDefault();
  }
  return { core: config.makeApiClient(k8s.CoreV1Api), custom: config.makeApiClient(k8s.CustomObjectsApi) };
}

/** The subcommand: `argv` is what follows `adopt`. */
export async function runAdopt(argv: readonly string[]): Promise<number> {
  const options = parseOptions(argv);
  if (!options) {
    return 0;
  }
  const clients = clientsFor(options.kubeconfig);
  const say = (line: string) => process.stdout.write(`${line}\n`);
  await (options.undo ? undo(clients, options, say) : adopt(clients, options, say));
  return 0;
}
