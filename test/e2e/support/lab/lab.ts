/**
 * The data-path lab: real packets from a client to a reserved address,
 * answered by MetalLB's speaker (ARP/NDP) on one of the nodes and forwarded
 * by that node's kube-proxy to a workload. Everything lives in network
 * namespaces this module makes (names `cozylab-<run>-*`) and removes on stop,
 * on process exit, and, for a killed run, at the next start.
 *
 *                        switch namespace
 *              ┌──────── bridge "pub" ────────┐        ┌──── bridge "pod" ────┐
 *              │ 203.0.113.0/24 2001:db8:1::/64│        │198.51.100.0/24 …:2::/64│
 *     client ──┤                  node1 ───────┼────────┼── node1              ├── w1
 *   (.2, ::2)  │                  node2 ───────┼────────┼── node2              ├── w2 …
 *              └───────────────────────────────┘        └──────────────────────┘
 *   each node: relay (127.0.0.1:16443 → unix socket → apiserver on the host's loopback),
 *              kube-proxy (nftables), MetalLB speaker (L2, memberlist on its .1x address)
 *   with `kubelet`, a further node "worker" runs Pods (kubelet.ts): kube-proxy, containerd and
 *              kubelet (no speaker), a relay to the
 *              e2e registry (127.0.0.1:15000), one to the apiserver on the address it
 *              advertises (the `kubernetes` Service's endpoint), and the apiserver's way in
 *              (an HTTP CONNECT proxy on a unix socket, for kubectl logs)
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as k8s from '@kubernetes/client-node';
import { dataPathBinaries, nodeBinaries } from '../binaries.js';
import type { Platform } from '../platform.js';
import { waitFor } from '../ports.js';
import { LabClient } from './client.js';
import { readCounters, type Counters } from './counters.js';
import { cleanLeftovers, ip, labUnavailable, LAB_PREFIX, newRun, removeNamespace } from './netns.js';
import { LabRouter, ROUTER_PUBLIC, UPLINK } from './router.js';
import { KubeletHost, KUBELET_NODE } from './kubelet.js';
import { LabNode } from './nodes.js';
import { splice } from './splice.js';
import { API_ADVERTISE_ADDRESS, CLIENT, LAB_RANGES, PUBLIC, REGISTRY_RELAY_PORT, workloadAddresses, WORKLOAD_PORT } from './plan.js';
import { agentArgs, kill9, spawnInteractive, startIn } from './run-in.js';
import { assertDocumentation, assertHostDoesNotUse, assertHostUnchanged, contains, hostSnapshot } from './safety.js';
import { makeNamespace, makeSwitch, plug, routeDevice } from './wiring.js';
import { endpointSlices, loadBalancer, type Family, type Workload } from './workloads.js';

export { labUnavailable };

const AGENTS = join(dirname(fileURLToPath(import.meta.url)), 'agents');
/** The client's one interface: the only way out of its namespace. */
const CLIENT_LINK = 'pub';

export interface LabOptions {
  /** How many nodes (each a speaker and a kube-proxy). @default 2 */
  readonly nodes?: number;
  /** Workload names, each its own namespace and HTTP server. */
  readonly workloads: readonly string[];
  /**
   * When set, every node runs a second speaker started with MetalLB's `--lb-class=<this>` (its
   * own memberlist on its own port), beside the one without the flag: the first announces only
   * Services of this spec.loadBalancerClass, the second only Services with none.
   */
  readonly lbClass?: string;
  /**
   * A further node, `worker`, runs Pods (kubelet.ts), pulling from the e2e registry at this host:port (on the machine's
   * loopback). The platform must have been started with Pod support (PlatformOptions.pods).
   */
  readonly kubelet?: { readonly registry: string };
  /**
   * An upstream router (router.ts): BIRD between the client and the nodes, the client's only way
   * to the public segment, peering with every node's speaker once a BGPPeer names it.
   */
  readonly router?: boolean;
}

export interface Lab {
  readonly runId: string;
  readonly nodes: readonly LabNode[];
  readonly client: LabClient;
  /** The worker node's kubelet and containerd, when the lab was started with `kubelet`. */
  readonly kubelet?: KubeletHost;
  /** The upstream router, when the lab was started with `router`. */
  readonly router?: LabRouter;
  workload(name: string): Workload;
  /** Checks, inside the client namespace, that the route to `ip` goes over the lab's own link, allows it, and returns its URL. */
  target(ip: string): Promise<string>;
  /**
   * Writes `service`'s EndpointSlices to name `workload` (on `options.node`, when given: what
   * externalTrafficPolicy: Local counts as local; with `options.portName` for a Service whose port
   * has a name); returns what removes them.
   */
  expose(namespace: string, service: string, workload: string, families?: readonly Family[], options?: { node?: string; portName?: string }): Promise<() => Promise<void>>;
  /**
   * Puts `workload` on `node` as a Pod's network would: its route to the public segment goes through
   * that node. A request a node hands over without masquerade (externalTrafficPolicy: Local keeps
   * the client's address) is answered back through it; one a node masquerades is unaffected.
   */
  placeWorkload(workload: string, node: string): void;
  /** Creates a LoadBalancer Service fronting `workload` (its EndpointSlices first); returns when the create returned. */
  createService(namespace: string, name: string, workload: string, options?: Parameters<typeof loadBalancer>[2]): Promise<k8s.V1Service>;
  /** The link-layer address the client's neighbour table holds for `ip` (learnt by ARP for IPv4, NDP for IPv6), if any. */
  neighbour(ip: string): string | undefined;
  /** The node whose pod-segment address is `peer` (who carried a request). */
  nodeByPeer(peer: string): LabNode | undefined;
  /** The node a request to `url` goes through now (the workload sees it as the peer); throws when none answers. */
  carrier(url: string): Promise<LabNode>;
  /** The kernel's loss-and-retry counters in every lab namespace (counters.ts). */
  counters(): Counters;
  /** The last lines of every lab process's log, for a failure message. */
  logs(lines?: number): string;
  stop(): Promise<void>;
}

export async function startLab(platform: Platform, options: LabOptions): Promise<Lab> {
  const unavailable = labUnavailable();
  if (unavailable) {
    throw new Error(unavailable);
  }
  const swept = cleanLeftovers();
  if (swept.length) {
    process.stdout.write(`lab: removed ${swept.length} namespaces left by a killed run: ${swept.join(', ')}\n`);
  }
  assertHostDoesNotUse(LAB_RANGES);
  const hostBefore = hostSnapshot();
  const { runId, dir } = newRun();
  const logs = join(dir, 'logs');
  mkdirSync(logs);
  const namespaces: string[] = [];
  const name = (role: string) => `${LAB_PREFIX}${runId}-${role}`;
  const bin = dataPathBinaries();
  const relays: Server[] = [];
  let kubelet: KubeletHost | undefined;
  let router: LabRouter | undefined;
  let client: LabClient | undefined;
  let clientProcess: ReturnType<typeof spawnInteractive> | undefined;
  const workloads = new Map<string, Workload>();
  const nodes: LabNode[] = [];
  let stopped = false;

  // Synchronous, for process exit: kill by pid and delete, nothing awaited. Returns what could not be removed.
  const sweep = (): string[] => {
    const left: string[] = [];
    for (const ns of [...namespaces].reverse()) {
      try {
        removeNamespace(ns);
      } catch (error) {
        left.push(`${ns} (${(error as Error).message.split('\n')[0]})`);
      }
    }
    namespaces.length = 0;
    return left;
  };
  process.once('exit', sweep);

  const stop = async () => {
    if (stopped) {
      return;
    }
    stopped = true;
    client?.close();
    if (clientProcess) {
      await kill9(clientProcess);
    }
    for (const w of workloads.values()) {
      await kill9(w.process.process);
    }
    await kubelet?.stop();
    for (const n of nodes) {
      await n.stop();
    }
    const left = sweep();
    process.removeListener('exit', sweep);
    await Promise.all(relays.map((relay) => new Promise<void>((r) => relay.close(() => r()))));
    if (process.env.COZYLAB_KEEP_LOGS !== '1') {
      rmSync(dir, { recursive: true, force: true });
    }
    assertHostUnchanged(hostBefore, hostSnapshot());
    if (left.length > 0) {
      // Left for the next run's sweep, but said here: every namespace the lab made goes with it.
      throw new Error(`lab: could not remove ${left.join(', ')}`);
    }
  };

  try {
    // The apiserver's end of every node's relay: a unix socket in the run's folder.
    const api = new URL(platform.cluster.server);
    const socket = join(dir, 'api.sock');
    relays.push(await hostRelay(socket, Number(api.port)));
    const registrySocket = join(dir, 'registry.sock');
    const egressSocket = platform.cluster.egressSocket;
    if (options.kubelet) {
      if (!egressSocket) {
        throw new Error('lab: kubelet needs a platform started with Pod support (PlatformOptions.pods)');
      }
      const [, port] = options.kubelet.registry.split(':');
      relays.push(await hostRelay(registrySocket, Number(port)));
    }

    const switchNs = name('switch');
    namespaces.push(switchNs);
    makeSwitch(switchNs);

    const clientNs = name('client');
    namespaces.push(clientNs);
    makeNamespace(clientNs);
    if (options.router) {
      // The client behind the router: the public segment only through it.
      const routerNs = name('router');
      namespaces.push(routerNs);
      makeNamespace(routerNs);
      plug(switchNs, 'pub', 'pub-router', routerNs, 'pub', ROUTER_PUBLIC);
      router = new LabRouter(routerNs, dir, logs);
      router.wireUplink(clientNs, CLIENT_LINK);
      ip(['-n', clientNs, 'route', 'add', PUBLIC.v4, 'via', UPLINK.router]);
    } else {
      plug(switchNs, 'pub', 'pub-client', clientNs, CLIENT_LINK, CLIENT);
    }
    // The client's only way out is the lab's segment: no default route, whatever else goes wrong.
    for (const family of ['-4', '-6']) {
      const defaults = ip(['-n', clientNs, family, 'route', 'show', 'default']).trim();
      if (defaults) {
        throw new Error(`lab safety: the client namespace has a default route (${defaults})`);
      }
    }

    options.workloads.forEach((w, i) => {
      const ns = name(w);
      namespaces.push(ns);
      makeNamespace(ns);
      const addresses = workloadAddresses(i + 1);
      plug(switchNs, 'pod', `pod-${w}`.slice(0, 15), ns, 'pod', addresses);
      const process_ = startIn(ns, `workload-${w}`, process.execPath, agentArgs(join(AGENTS, 'workload-agent.ts'), [w, String(WORKLOAD_PORT)]), logs);
      workloads.set(w, { name: w, ns, addresses, process: process_ });
    });

    const memberlistKeyDir = join(dir, 'memberlist');
    mkdirSync(memberlistKeyDir);
    writeFileSync(join(memberlistKeyDir, 'secretkey'), randomBytes(16).toString('hex'));
    const context = {
      runId,
      dir,
      switchNs,
      socket,
      adminKubeconfig: platform.cluster.kubeconfig(),
      core: platform.admin.core,
      tools: { kubeProxy: bin.kubeProxy, speaker: bin.metallbSpeaker, relayAgent: join(AGENTS, 'relay-agent.ts') },
      memberlistKeyDir,
      nodeNames: Array.from({ length: options.nodes ?? 2 }, (_, i) => `node${i + 1}`),
      lbClass: options.lbClass,
    };
    for (const [i, nodeName] of context.nodeNames.entries()) {
      const node = new LabNode(nodeName, i + 1, context);
      namespaces.push(node.ns);
      nodes.push(node);
      node.wire();
      await node.register();
    }
    await Promise.all(nodes.map((n) => n.start()));
    if (router) {
      for (const node of nodes) {
        // More specific than the pod segment's /24 the uplink is carved from: replies go back through the router.
        ip(['-n', node.ns, 'route', 'add', UPLINK.net, 'via', ROUTER_PUBLIC.v4]);
      }
      await router.start(nodes.map((n) => ({ name: n.name, address: n.pub.v4 })));
    }
    if (options.kubelet && egressSocket) {
      // Its own node, without a speaker: kubelet runs the Pods bound to it, and MetalLB's speakers
      // (processes here, with Pod objects bound to their nodes) stay on the others.
      const node = new LabNode(KUBELET_NODE, context.nodeNames.length + 1, context, true);
      namespaces.push(node.ns);
      nodes.push(node);
      node.wire();
      await node.start();
      const agents = { relay: join(AGENTS, 'relay-agent.ts'), proxy: join(AGENTS, 'connect-proxy-agent.ts') };
      // The address the apiserver advertises is the node's own: a Pod's connection to the
      // `kubernetes` Service, rewritten by kube-proxy, ends at this relay.
      assertDocumentation(API_ADVERTISE_ADDRESS);
      ip(['-n', node.ns, 'addr', 'add', `${API_ADVERTISE_ADDRESS}/32`, 'dev', 'lo']);
      await node.startAgent('relay-api', agents.relay, [api.port, socket, API_ADVERTISE_ADDRESS], /relay listening/);
      await node.startAgent('relay-registry', agents.relay, [String(REGISTRY_RELAY_PORT), registrySocket], /relay listening/);
      await node.startAgent('egress', agents.proxy, [egressSocket], /connect proxy listening/);
      const nodeDir = join(dir, node.name);
      mkdirSync(nodeDir);
      kubelet = new KubeletHost({
        ns: node.ns,
        nodeName: node.name,
        nodeIp: node.pub.v4,
        kubeconfig: node.kubeconfigFile,
        dir: nodeDir,
        logs,
        cgroupName: `${LAB_PREFIX}${runId}-${node.name}`,
        kubelet: nodeBinaries().kubelet,
      });
      await kubelet.start();
      await waitFor(`${node.name} Ready (${kubelet.kubeletLog(10)})`, async () => {
        const read = await platform.admin.core.readNode({ name: node.name });
        return read.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
      }, 120_000);
    }

    clientProcess = spawnInteractive(clientNs, 'client', process.execPath, agentArgs(join(AGENTS, 'client-agent.ts'), []), logs);
    client = new LabClient(clientProcess);
    await Promise.race([
      client.ready,
      new Promise((_, reject) => setTimeout(() => reject(new Error('the client agent did not start within 30 s')), 30_000)),
    ]);
    for (const w of workloads.values()) {
      await waitFor(`workload ${w.name} listening (${w.process.tail(3)})`, async () => /listening/.test(w.process.tail(3)), 30_000);
    }
  } catch (error) {
    const tails = describeLogs(nodes, workloads, 15);
    await stop().catch(() => undefined);
    throw new Error(`the lab did not start: ${(error as Error).message}\n${tails}`);
  }

  const readyClient = client;
  const lab: Lab = {
    runId,
    nodes,
    client: readyClient,
    kubelet,
    router,
    workload(w) {
      const found = workloads.get(w);
      if (!found) {
        throw new Error(`lab: no workload ${w}`);
      }
      return found;
    },
    async target(ip) {
      assertDocumentation(ip);
      if (!contains(ip.includes(':') ? PUBLIC.v6 : PUBLIC.v4, ip)) {
        throw new Error(`lab: ${ip} is not on the lab's public segment`);
      }
      const device = routeDevice(name('client'), ip);
      if (device !== CLIENT_LINK) {
        throw new Error(`lab safety: inside the client namespace the route to ${ip} goes ${device ? `over ${device}` : 'nowhere'}, not over the lab's link ${CLIENT_LINK}`);
      }
      await readyClient.allow(ip);
      return ip.includes(':') ? `http://[${ip}]/` : `http://${ip}/`;
    },
    async expose(namespace, service, w, families = ['IPv4'], exposeOptions = {}) {
      if (exposeOptions.node !== undefined && !nodes.some((n) => n.name === exposeOptions.node)) {
        throw new Error(`lab: no node ${exposeOptions.node}`);
      }
      const slices = endpointSlices(namespace, service, lab.workload(w), families, { nodeName: exposeOptions.node, portName: exposeOptions.portName });
      for (const slice of slices) {
        await platform.admin.objects.create(slice);
      }
      return async () => {
        for (const slice of slices) {
          await platform.admin.objects.delete(slice).catch((e: { code?: number }) => (e.code === 404 ? undefined : Promise.reject(e)));
        }
      };
    },
    placeWorkload(w, nodeName) {
      const workload = lab.workload(w);
      const node = nodes.find((n) => n.name === nodeName);
      if (!node) {
        throw new Error(`lab: no node ${nodeName}`);
      }
      for (const [family, segment, via] of [['-4', PUBLIC.v4, node.pod.v4], ['-6', PUBLIC.v6, node.pod.v6]] as const) {
        assertDocumentation(via);
        ip(['-n', workload.ns, family, 'route', 'replace', segment, 'via', via, 'dev', 'pod']);
      }
    },
    async createService(namespace, service, w, serviceOptions = {}) {
      await lab.expose(namespace, service, w, serviceOptions.families);
      return platform.admin.core.createNamespacedService({ namespace, body: loadBalancer(namespace, service, serviceOptions) });
    },
    neighbour(target) {
      return /lladdr\s+(\S+)/.exec(ip(['-n', name('client'), target.includes(':') ? '-6' : '-4', 'neigh', 'show', target]))?.[1];
    },
    nodeByPeer(peer) {
      return nodes.find((n) => n.pod.v4 === peer || n.pod.v6 === peer);
    },
    async carrier(url) {
      const answer = await readyClient.probe(url, 2_000);
      const node = answer.ok ? lab.nodeByPeer(answer.peer) : undefined;
      if (!node) {
        throw new Error(answer.ok ? `${url} answered through ${answer.peer}, which is no lab node` : `no answer on ${url}: ${answer.error}`);
      }
      return node;
    },
    counters() {
      const read = readCounters(namespaces);
      // Keyed by role (client, node1, w1, switch …) rather than the run's full names.
      return Object.fromEntries(Object.entries(read).map(([ns, c]) => [ns.slice(`${LAB_PREFIX}${runId}-`.length), c]));
    },
    logs(lines = 20) {
      return describeLogs(nodes, workloads, lines);
    },
    stop,
  };
  return lab;
}

/** The machine's end of a relay: a unix socket in the run's folder piped to a port on the machine's loopback. */
async function hostRelay(socket: string, port: number): Promise<Server> {
  const server = createServer((inbound) => splice(inbound, connect(port, '127.0.0.1')));
  await new Promise<void>((r) => server.listen(socket, () => r()));
  return server;
}

function describeLogs(nodes: readonly LabNode[], workloads: ReadonlyMap<string, Workload>, lines: number): string {
  return [
    ...nodes.flatMap((n) => [
      `--- ${n.name} speaker\n${n.speakerLog(lines)}`,
      ...(n.classSpeakerLog(1) ? [`--- ${n.name} --lb-class speaker\n${n.classSpeakerLog(lines)}`] : []),
      `--- ${n.name} kube-proxy\n${n.kubeProxyLog(lines)}`,
    ]),
    ...[...workloads.values()].map((w) => `--- workload ${w.name}\n${w.process.tail(lines)}`),
  ].join('\n');
}
