/**
 * A lab node: its own namespace on both segments, forwarding on, a relay to
 * the apiserver on its loopback, kube-proxy (nftables mode) and MetalLB's
 * speaker (L2, memberlist bound to the node's public address), plus the Node
 * object and the speaker's Pod object the two read. Memberlist is on, so a
 * killed speaker drops out of the election and the other node takes over.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import type { Started } from '../processes.js';
import { waitFor } from '../ports.js';
import { ip, netSysctl } from './netns.js';
import { nodeAddresses, RELAY_PORT, type HostAddresses } from './plan.js';
import { agentArgs, startIn } from './run-in.js';
import { makeNamespace, plug, setPort } from './wiring.js';

export const METALLB_NAMESPACE = 'cozy-metallb';
const SPEAKER_LABELS = { app: 'metallb', component: 'speaker' } as const;
const MEMBERLIST_PORT = 7946;
/**
 * The speakers started with --lb-class: their own Pod objects (their memberlist finds its peers by
 * these labels, not the others'), memberlist port, and metrics and health ports (both speakers of
 * a node share its namespace).
 */
const CLASS_SPEAKER = { labels: { app: 'metallb', component: 'speaker-lb-class' }, memberlistPort: 7947, metricsPort: 9121, healthPort: 17473 } as const;

/** What a speaker's log says memberlist told it of `node`, oldest first (MetalLB's JSON log: keys sorted). */
function memberEvents(log: string, node: string): string[] {
  return [...log.matchAll(new RegExp(`"node event":"(NodeJoin|NodeLeave|NodeUpdate)","node name":"${node}"`, 'g'))].map((m) => m[1]!);
}

export interface NodeTools {
  readonly kubeProxy: string;
  readonly speaker: string;
  readonly relayAgent: string;
}

export interface LabNodeContext {
  readonly runId: string;
  readonly dir: string;
  readonly switchNs: string;
  readonly socket: string;
  /** The admin's kubeconfig, whose server the node's copy replaces with its relay. */
  readonly adminKubeconfig: string;
  readonly core: k8s.CoreV1Api;
  readonly tools: NodeTools;
  /** Folder holding the memberlist key (file `secretkey`). */
  readonly memberlistKeyDir: string;
  /** Every lab node's name: a speaker is ready once memberlist has shown it all of them. */
  readonly nodeNames: readonly string[];
  /** When set, a second speaker on every node, started with `--lb-class=<this>`. */
  readonly lbClass?: string;
}

export class LabNode {
  readonly ns: string;
  readonly pub: HostAddresses;
  readonly pod: HostAddresses;
  readonly port: string;
  private speaker?: Started;
  private kubeProxy?: Started;
  private relay?: Started;
  private speakerRuns = 0;
  private classSpeaker?: Started;
  private classSpeakerRuns = 0;
  private kubeconfig = '';
  private readonly agents: Started[] = [];

  constructor(
    readonly name: string,
    index: number,
    private readonly ctx: LabNodeContext,
    /** A node without MetalLB's speaker: the kubelet's (its Node object is kubelet's to register). */
    readonly speakerless = false,
  ) {
    this.ns = `cozylab-${ctx.runId}-${name}`;
    ({ pub: this.pub, pod: this.pod } = nodeAddresses(index));
    this.port = `pub-${name}`;
  }

  /** The node's kubeconfig: the admin's, through the node's relay (written by start). */
  get kubeconfigFile(): string {
    return this.kubeconfig;
  }

  /** A further agent (agents/*.ts) in the node's namespace, stopped with the node; resolves once its log shows `ready`. */
  async startAgent(name: string, agent: string, args: readonly string[], ready: RegExp): Promise<void> {
    const started = startIn(this.ns, `${this.name}-${name}`, process.execPath, agentArgs(agent, args), join(this.ctx.dir, 'logs'));
    this.agents.push(started);
    await waitFor(`${this.name} ${name} (${started.tail(5)})`, async () => ready.test(started.tail(5)), 30_000);
  }

  get speakerPodName(): string {
    return `speaker-${this.name}`;
  }

  /** The Pod object of the node's --lb-class speaker. */
  get classSpeakerPodName(): string {
    return `speaker-lb-class-${this.name}`;
  }

  /** Namespace, cables and forwarding. */
  wire(): void {
    makeNamespace(this.ns);
    plug(this.ctx.switchNs, 'pub', this.port, this.ns, 'pub', this.pub);
    plug(this.ctx.switchNs, 'pod', `pod-${this.name}`, this.ns, 'pod', this.pod);
    // A node forwards what kube-proxy rewrites (only inside its own namespace).
    netSysctl(this.ns, 'net/ipv4/ip_forward', '1');
    netSysctl(this.ns, 'net/ipv6/conf/all/forwarding', '1');
  }

  /** The Node object (both addresses) and the speaker's Pod object, whose podIP is how memberlist finds its peers. */
  async register(): Promise<void> {
    if (this.speakerless) {
      return;
    }
    await this.ctx.core.createNode({
      body: {
        metadata: { name: this.name, labels: { 'kubernetes.io/hostname': this.name, 'cozylab.run': this.ctx.runId } },
        status: { addresses: [{ type: 'InternalIP', address: this.pub.v4 }, { type: 'InternalIP', address: this.pub.v6 }, { type: 'Hostname', address: this.name }] },
      },
    });
    const node = await this.ctx.core.readNode({ name: this.name });
    if (!node.status?.addresses?.length) {
      await this.ctx.core.replaceNodeStatus({ name: this.name, body: { ...node, status: { addresses: [{ type: 'InternalIP', address: this.pub.v4 }, { type: 'InternalIP', address: this.pub.v6 }] } } });
    }
    await this.registerSpeakerPod(this.speakerPodName, SPEAKER_LABELS);
    if (this.ctx.lbClass !== undefined) {
      await this.registerSpeakerPod(this.classSpeakerPodName, CLASS_SPEAKER.labels);
    }
  }

  private async registerSpeakerPod(name: string, labels: Record<string, string>): Promise<void> {
    const pod = await this.ctx.core.createNamespacedPod({
      namespace: METALLB_NAMESPACE,
      body: {
        metadata: { name, labels: { ...labels } },
        spec: { nodeName: this.name, hostNetwork: true, containers: [{ name: 'speaker', image: 'quay.io/metallb/speaker:v0.16.1' }] },
      },
    });
    await this.ctx.core.replaceNamespacedPodStatus({
      namespace: METALLB_NAMESPACE,
      name,
      body: { ...pod, status: { phase: 'Running', podIP: this.pub.v4, podIPs: [{ ip: this.pub.v4 }], hostIP: this.pub.v4, hostIPs: [{ ip: this.pub.v4 }] } },
    });
  }

  /** The relay, then kube-proxy and the speaker, all inside the node's namespace. */
  async start(): Promise<void> {
    const logs = join(this.ctx.dir, 'logs');
    this.relay = startIn(this.ns, `${this.name}-relay`, process.execPath, agentArgs(this.ctx.tools.relayAgent, [String(RELAY_PORT), this.ctx.socket]), logs);
    this.kubeconfig = join(this.ctx.dir, `kubeconfig-${this.name}`);
    const config = JSON.parse(readFileSync(this.ctx.adminKubeconfig, 'utf8')) as { clusters: { cluster: { server: string } }[] };
    config.clusters[0]!.cluster.server = `https://127.0.0.1:${RELAY_PORT}`;
    writeFileSync(this.kubeconfig, JSON.stringify(config));
    await waitFor(`${this.name} relay (${this.relay.tail(5)})`, async () => /relay listening/.test(this.relay!.tail(5)), 30_000);
    this.kubeProxy = startIn(
      this.ns,
      `${this.name}-kube-proxy`,
      this.ctx.tools.kubeProxy,
      [
        `--kubeconfig=${this.kubeconfig}`,
        `--hostname-override=${this.name}`,
        '--proxy-mode=nftables',
        `--bind-address=${this.pub.v4}`,
        '--nodeport-addresses=primary',
        // 0 leaves the kernel's conntrack settings alone (nf_conntrack_max is read-only outside the root namespace).
        '--conntrack-max-per-core=0',
        '--conntrack-tcp-timeout-established=0',
        '--conntrack-tcp-timeout-close-wait=0',
        '--healthz-bind-address=127.0.0.1:10256',
        '--metrics-bind-address=127.0.0.1:10249',
        '--v=2',
      ],
      logs,
    );
    if (!this.speakerless) {
      await this.startSpeaker();
      if (this.ctx.lbClass !== undefined) {
        await this.startClassSpeaker();
      }
    }
    const proxy = this.kubeProxy;
    // Its first full sync: the node forwards Services from here on.
    await waitFor(`${this.name} kube-proxy synced (${proxy.tail(5)})`, async () => /SyncProxyRules complete/.test(proxy.tail(400)), 60_000);
  }

  async startSpeaker(): Promise<void> {
    this.speakerRuns++;
    this.speaker = await this.launchSpeaker(`${this.name}-speaker${this.speakerRuns > 1 ? `-${this.speakerRuns}` : ''}`, [
      `--pod-name=${this.speakerPodName}`,
      `--ml-bindport=${MEMBERLIST_PORT}`,
      `--ml-labels=${Object.entries(SPEAKER_LABELS).map(([k, v]) => `${k}=${v}`).join(',')}`,
    ]);
  }

  /** The node's --lb-class speaker (the lab was started with `lbClass`). */
  async startClassSpeaker(): Promise<void> {
    if (this.ctx.lbClass === undefined) {
      throw new Error('lab: started without lbClass, no --lb-class speakers');
    }
    this.classSpeakerRuns++;
    this.classSpeaker = await this.launchSpeaker(`${this.name}-speaker-lb-class${this.classSpeakerRuns > 1 ? `-${this.classSpeakerRuns}` : ''}`, [
      `--pod-name=${this.classSpeakerPodName}`,
      `--ml-bindport=${CLASS_SPEAKER.memberlistPort}`,
      `--ml-labels=${Object.entries(CLASS_SPEAKER.labels).map(([k, v]) => `${k}=${v}`).join(',')}`,
      `--port=${CLASS_SPEAKER.metricsPort}`,
      `--health-probe-port=${CLASS_SPEAKER.healthPort}`,
      `--lb-class=${this.ctx.lbClass}`,
    ]);
  }

  private async launchSpeaker(logName: string, args: readonly string[]): Promise<Started> {
    const logs = join(this.ctx.dir, 'logs');
    const speaker = startIn(
      this.ns,
      logName,
      this.ctx.tools.speaker,
      [
        `--node-name=${this.name}`,
        `--namespace=${METALLB_NAMESPACE}`,
        `--ml-bindaddr=${this.pub.v4}`,
        `--ml-secret-key-path=${this.ctx.memberlistKeyDir}`,
        '--log-level=info',
        ...args,
      ],
      logs,
      { ...process.env, KUBECONFIG: this.kubeconfig },
    );
    // Ready once memberlist has joined every node (itself included): from then on the election counts them.
    await waitFor(`${this.name} ${logName} joined ${this.ctx.nodeNames.join(', ')} (${speaker.tail(5)})`, async () => {
      const log = speaker.tail(400);
      return this.ctx.nodeNames.every((n) => memberEvents(log, n).includes('NodeJoin'));
    }, 60_000);
    return speaker;
  }

  /**
   * Once memberlist has told this node's speaker that `other` is back after leaving: its view of
   * the cluster is whole again. Until then a node that was cut off still announces every address
   * on its own, beside the node that took them over (MetalLB's speakers retry a join only every
   * minute).
   */
  async waitRejoined(other: string, timeoutMs = 120_000): Promise<void> {
    await waitFor(`${this.name} speaker sees ${other} again (${this.speaker?.tail(5)})`, async () => memberEvents(this.speaker?.tail(400) ?? '', other).at(-1) === 'NodeJoin', timeoutMs);
  }

  /** kill -9 of the speaker; resolves once it is gone. */
  async killSpeaker(): Promise<void> {
    const p = this.speaker?.process;
    if (!p || p.exitCode !== null || p.signalCode !== null) {
      return;
    }
    const exited = new Promise<void>((r) => p.once('exit', () => r()));
    p.kill('SIGKILL');
    await exited;
  }

  /** Unplugs (or plugs back) the node's public cable at the switch: as if the node dropped off the network. */
  setPublicLink(up: boolean): void {
    setPort(this.ctx.switchNs, this.port, up);
  }

  /** The MAC address of the node's public interface (what the client's ARP and NDP entries name when this node announces). */
  mac(): string {
    return /link\/ether\s+(\S+)/.exec(ip(['-n', this.ns, 'link', 'show', 'pub']))?.[1] ?? '';
  }

  speakerLog(lines = 40): string {
    return this.speaker?.tail(lines) ?? '';
  }

  /** The --lb-class speaker's log ('' when the node runs none). */
  classSpeakerLog(lines = 40): string {
    return this.classSpeaker?.tail(lines) ?? '';
  }

  kubeProxyLog(lines = 40): string {
    return this.kubeProxy?.tail(lines) ?? '';
  }

  async stop(): Promise<void> {
    for (const p of [this.speaker, this.classSpeaker, this.kubeProxy, this.relay, ...this.agents]) {
      const child = p?.process;
      if (child && child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGKILL');
        await exited;
      }
    }
  }
}
