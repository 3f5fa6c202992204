/**
 * A lab node that runs Pods: containerd (Debian's, with runc) and kubelet
 * inside the node's network namespace and a private mount namespace, the Pods'
 * network made by Debian's CNI plugins (bridge, host-local, loopback).
 *
 * What keeps the machine as it was:
 * - one mount namespace (a "holder" process, slave to the machine's) shared by
 *   containerd, its shims and kubelet; tmpfs over /run, /var/lib and /var/log
 *   there, so sockets, CNI state and Pod logs never reach the machine's own
 *   folders, and every mount goes when the last process of the namespace does;
 * - kubelet's kernel tunables (vm.overcommit_memory, kernel.panic, ...) are
 *   machine-wide, not per namespace: in the holder's namespace they are files
 *   bind-mounted over /proc/sys with the values kubelet wants, and kubelet runs
 *   with protectKernelDefaults, so it reads and never writes;
 * - Pods' cgroups under `/<cgroupRoot>` of each hierarchy, named by the run, so
 *   stop (and the next run's sweep, for a killed run) finds and removes them;
 * - containerd's Pod network namespaces pinned under its state folder, not /run/netns.
 *
 * containerd pulls through its registry host configuration: ghcr.io is mirrored
 * to the node's relay to the e2e registry, so the charts' image references
 * (`ghcr.io/cozystack/<name>:<version>@sha256:…`) are pulled unchanged.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { CGROUP_ROOT, createCgroups, killCgroups, removeCgroups } from './cgroups.js';
import { join } from 'node:path';
import { start, type Started } from '../processes.js';
import { waitFor } from '../ports.js';
import { KUBELET_POD_CIDR, REGISTRY_RELAY_PORT } from './plan.js';

/** The lab node that runs Pods. */
export const KUBELET_NODE = 'worker';
/** The registry containerd pulls from, as the node sees it (its relay on loopback). */
export const NODE_REGISTRY = `127.0.0.1:${REGISTRY_RELAY_PORT}`;
export const PAUSE_IMAGE = `${NODE_REGISTRY}/e2e/pause:1`;
const CNI_BIN = '/usr/lib/cni';
/** What kubelet's container manager wants of the machine-wide tunables (pkg/kubelet/cm, setupKernelTunables). */
const KERNEL_TUNABLES: Readonly<Record<string, string>> = {
  'vm/overcommit_memory': '1',
  'vm/panic_on_oom': '0',
  'kernel/panic': '10',
  'kernel/panic_on_oops': '1',
  'kernel/keys/root_maxkeys': '1000000',
  'kernel/keys/root_maxbytes': '25000000',
};

export interface KubeletHostOptions {
  /** The node's network namespace (already wired) and name. */
  readonly ns: string;
  readonly nodeName: string;
  /** The node's address on the public segment: kubelet's node IP and serving address. */
  readonly nodeIp: string;
  /** The node's kubeconfig (its relay to the apiserver). */
  readonly kubeconfig: string;
  /** This node's folder (state, config) and the run's log folder. */
  readonly dir: string;
  readonly logs: string;
  /** The name of the Pods' cgroup under every hierarchy: the lab run's prefix, so a sweep finds it. */
  readonly cgroupName: string;
  readonly kubelet: string;
}

/** Why this machine cannot run the node, or undefined when it can (the lab's own needs come first). */
export const kubeletUnavailable = (): string | undefined => {
  for (const [tool, pkg] of [['/usr/bin/containerd', 'containerd'], ['/usr/sbin/runc', 'runc'], [join(CNI_BIN, 'bridge'), 'containernetworking-plugins'], ['/usr/bin/nsenter', 'util-linux'], ['/usr/bin/unshare', 'util-linux']] as const) {
    if (!existsSync(tool)) {
      return `the node suite needs ${tool} (Debian package ${pkg}; .ci/run installs it)`;
    }
  }
  if (!existsSync(join(CGROUP_ROOT, 'memory')) && !existsSync(join(CGROUP_ROOT, 'cgroup.controllers'))) {
    return `the node suite needs cgroups mounted under ${CGROUP_ROOT}`;
  }
  return undefined;
};

export class KubeletHost {
  private holder?: Started;
  private containerd?: Started;
  private kubeletProcess?: Started;
  private readonly socket: string;

  constructor(private readonly o: KubeletHostOptions) {
    this.socket = join(o.dir, 'containerd', 'containerd.sock');
  }

  async start(): Promise<void> {
    const { dir } = this.o;
    for (const sub of ['containerd/root', 'containerd/state', 'containerd/certs.d', 'cni/net.d', 'cni/ipam', 'kubelet', 'sysctl']) {
      mkdirSync(join(dir, sub), { recursive: true });
    }
    this.writeContainerdConfig();
    this.writeKubeletConfig();
    createCgroups(this.o.cgroupName);
    const tunables = Object.entries(KERNEL_TUNABLES).map(([key, value]) => {
      const file = join(dir, 'sysctl', key.replaceAll('/', '_'));
      writeFileSync(file, `${value}\n`);
      return `mount --bind ${file} /proc/sys/${key}`;
    });
    const script = [
      'set -e',
      'for d in /run /var/lib /var/log; do mount -t tmpfs -o mode=755 lab-node "$d"; done',
      ...tunables,
      'echo holder ready',
      'exec sleep infinity',
    ].join('\n');
    this.holder = start(`${this.o.nodeName}-holder`, 'nsenter', [`--net=/run/netns/${this.o.ns}`, '--', 'unshare', '--mount', '--propagation', 'slave', '--', 'setpriv', '--pdeathsig', 'KILL', '--', 'sh', '-c', script], this.o.logs);
    await waitFor(`${this.o.nodeName} holder (${this.holder.tail(5)})`, async () => /holder ready/.test(this.holder!.tail(5)), 15_000);

    this.containerd = this.inside(`${this.o.nodeName}-containerd`, '/usr/bin/containerd', ['--config', join(dir, 'containerd.toml')]);
    await waitFor(`${this.o.nodeName} containerd (${this.containerd.tail(5)})`, async () => existsSync(this.socket) && /containerd successfully booted/.test(this.containerd!.tail(200)), 30_000);

    this.kubeletProcess = this.inside(`${this.o.nodeName}-kubelet`, this.o.kubelet, [
      `--config=${join(dir, 'kubelet.yaml')}`,
      `--kubeconfig=${this.o.kubeconfig}`,
      `--root-dir=${join(dir, 'kubelet')}`,
      `--cert-dir=${join(dir, 'kubelet', 'pki')}`,
      `--hostname-override=${this.o.nodeName}`,
      `--node-ip=${this.o.nodeIp}`,
      '--v=2',
    ]);
  }

  /** Runs a command in the holder's mount namespace and the node's network namespace. */
  private inside(name: string, command: string, args: readonly string[]): Started {
    const pid = this.holder?.process.pid;
    if (!pid) {
      throw new Error(`${this.o.nodeName}: no holder process`);
    }
    return start(name, 'nsenter', [`--target=${pid}`, '--mount', '--net', '--', 'setpriv', '--pdeathsig', 'KILL', '--', command, ...args], this.o.logs);
  }

  /** `crictl`-less view of the runtime: what containerd's ctr lists in kubelet's namespace. */
  ctr(args: readonly string[]): string {
    return execFileSync('ctr', ['--address', this.socket, '--namespace', 'k8s.io', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }

  kubeletLog(lines = 40): string {
    return this.kubeletProcess?.tail(lines) ?? '';
  }

  containerdLog(lines = 40): string {
    return this.containerd?.tail(lines) ?? '';
  }

  private writeContainerdConfig(): void {
    const { dir } = this.o;
    const mirror = (host: string, server: string) => {
      mkdirSync(join(dir, 'containerd', 'certs.d', host), { recursive: true });
      writeFileSync(join(dir, 'containerd', 'certs.d', host, 'hosts.toml'), `server = "${server}"\n\n[host."http://${NODE_REGISTRY}"]\n  capabilities = ["pull", "resolve"]\n`);
    };
    // The charts' registry, mirrored to the e2e registry: the references stay as rendered.
    mirror('ghcr.io', 'https://ghcr.io');
    mirror(NODE_REGISTRY, `http://${NODE_REGISTRY}`);
    const cri = 'plugins."io.containerd.grpc.v1.cri"';
    writeFileSync(
      join(dir, 'containerd.toml'),
      [
        'version = 2',
        `root = "${join(dir, 'containerd', 'root')}"`,
        `state = "${join(dir, 'containerd', 'state')}"`,
        '[grpc]',
        `  address = "${this.socket}"`,
        '[plugins."io.containerd.internal.v1.opt"]',
        `  path = "${join(dir, 'containerd', 'opt')}"`,
        `[${cri}]`,
        `  sandbox_image = "${PAUSE_IMAGE}"`,
        '  netns_mounts_under_state_dir = true',
        '  disable_apparmor = true',
        // This machine may not lower a process's OOM score (no CAP_SYS_RESOURCE): containerd caps each
        // container's at its own, as it does when it runs in a container itself.
        '  restrict_oom_score_adj = true',
        '  stream_server_address = "127.0.0.1"',
        `[${cri}.containerd]`,
        '  snapshotter = "overlayfs"',
        '  default_runtime_name = "runc"',
        `[${cri}.containerd.runtimes.runc]`,
        '  runtime_type = "io.containerd.runc.v2"',
        `[${cri}.containerd.runtimes.runc.options]`,
        '  SystemdCgroup = false',
        // E2E_RUNC: another runc (a wrapper adding --debug, say) when a container will not start:
        // runc's own reason is in a log containerd deletes with the failed task.
        ...(process.env.E2E_RUNC ? [`  BinaryName = "${process.env.E2E_RUNC}"`] : []),
        `[${cri}.cni]`,
        `  bin_dir = "${CNI_BIN}"`,
        `  conf_dir = "${join(dir, 'cni', 'net.d')}"`,
        `[${cri}.registry]`,
        `  config_path = "${join(dir, 'containerd', 'certs.d')}"`,
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'cni', 'net.d', '10-lab.conflist'),
      JSON.stringify({
        cniVersion: '1.0.0',
        name: 'lab-pods',
        plugins: [
          {
            type: 'bridge',
            bridge: 'cni0',
            isGateway: true,
            ipMasq: false,
            hairpinMode: true,
            ipam: { type: 'host-local', ranges: [[{ subnet: KUBELET_POD_CIDR }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: join(dir, 'cni', 'ipam') },
          },
        ],
      }),
    );
  }

  private writeKubeletConfig(): void {
    writeFileSync(
      join(this.o.dir, 'kubelet.yaml'),
      JSON.stringify({
        apiVersion: 'kubelet.config.k8s.io/v1beta1',
        kind: 'KubeletConfiguration',
        address: this.o.nodeIp,
        readOnlyPort: 0,
        healthzBindAddress: '127.0.0.1',
        // The apiserver's requests (logs) come through the node's own proxy, unauthenticated:
        // nothing outside the lab can reach this port.
        authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
        authorization: { mode: 'AlwaysAllow' },
        cgroupDriver: 'cgroupfs',
        cgroupRoot: `/${this.o.cgroupName}`,
        containerRuntimeEndpoint: `unix://${this.socket}`,
        failSwapOn: false,
        protectKernelDefaults: true,
        resolvConf: '',
        podCIDR: KUBELET_POD_CIDR,
        maxPods: 30,
        serializeImagePulls: false,
        // The machine's disk is shared with everything else: evict nothing for it.
        evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
        imageGCHighThresholdPercent: 100,
        imageGCLowThresholdPercent: 99,
      }),
    );
  }

  /** Kills everything of the node (kubelet, containers, shims, containerd, the holder) and removes the Pods' cgroups. */
  async stop(): Promise<void> {
    const mountNs = this.holder?.process.pid ? nsOf(this.holder.process.pid) : undefined;
    await this.kubeletProcess?.stop();
    killCgroups(this.o.cgroupName);
    if (mountNs) {
      for (const pid of pidsInMountNs(mountNs)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
    }
    for (const p of [this.containerd, this.holder]) {
      await p?.stop();
    }
    await removeCgroups(this.o.cgroupName);
  }
}

function nsOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/mnt`);
  } catch {
    return undefined;
  }
}

function pidsInMountNs(ns: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => pid !== process.pid && nsOf(pid) === ns);
}
