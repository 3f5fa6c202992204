/**
 * A real control plane on loopback: etcd, kube-apiserver (RBAC, static tokens,
 * ValidatingAdmissionPolicy on by default in 1.34) and, on request,
 * kube-controller-manager running the RBAC-aggregation, garbage-collector,
 * namespace and resource-quota controllers. No Pod runs unless `pods` is given
 * (then the scheduler, the Deployment and node-lifecycle controllers and ServiceAccount admission
 * too, for the kubelets of the lab's node suite). Everything it starts it stops,
 * and its temp folder goes with it.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { binaries, nodeBinaries } from './binaries.js';
import { freePort, waitFor } from './ports.js';
import { start, type Started } from './processes.js';

export interface User {
  readonly name: string;
  readonly groups: readonly string[];
}

export interface ClusterOptions {
  /** Users beyond the admin, each with its own static token. */
  readonly users?: readonly User[];
  /** Start kube-controller-manager too. @default false */
  readonly controllerManager?: boolean;
  /** ClusterIP range; every placeholder takes one. @default 10.0.0.0/24 */
  readonly serviceClusterIpRange?: string;
  /**
   * Keep an apiserver audit log of every write (create, update, patch, delete), at Metadata
   * level: who wrote what, in `<dir>/audit.log`, one JSON event a line. @default false
   */
  readonly auditLog?: boolean;
  /** Run Pods: what a kubelet in the lab needs of the control plane. @default none */
  readonly pods?: PodSupport;
}

/**
 * What Pods need beyond the objects: kube-scheduler; kube-controller-manager's
 * Deployment, ReplicaSet, ServiceAccount, EndpointSlice and root-CA publisher
 * controllers; ServiceAccount admission (the projected token volume); an
 * address for the `kubernetes` Service's endpoints that a node can answer on;
 * and a way for the apiserver to reach kubelets (logs).
 */
export interface PodSupport {
  /**
   * What the apiserver advertises as its address: the `kubernetes` Service's endpoint, where
   * kube-proxy sends a Pod's in-cluster connections. A lab node answers there (a relay to this
   * apiserver), since the apiserver itself listens on the machine's loopback only.
   */
  readonly advertiseAddress: string;
}

export interface Cluster {
  readonly server: string;
  readonly dir: string;
  /** The audit log's path, when ClusterOptions.auditLog asked for one. */
  readonly auditLog?: string;
  /**
   * With Pod support: the unix socket (in the cluster's folder) of the HTTP CONNECT proxy through
   * which the apiserver reaches nodes and pods (its egress selector's `cluster` egress); a lab
   * node's agent listens there.
   */
  readonly egressSocket?: string;
  /** A kubeconfig file for `user` (default admin, in system:masters). */
  kubeconfig(user?: string): string;
  client(user?: string): k8s.KubeConfig;
  /** Stops kube-apiserver and starts it again on the same port and etcd (a control-plane restart). */
  restartApiserver(): Promise<void>;
  /** Compacts etcd's history up to now: watches resuming from before get 410 Gone. */
  compactEtcd(): Promise<void>;
  stop(): Promise<void>;
}

export const ADMIN = 'e2e-admin';
const EGRESS_SOCKET = 'egress.sock';

/**
 * Starts a control plane; once more on fresh ports if a process lost its port
 * (freePort releases the port before etcd or kube-apiserver binds it, and a
 * suite running beside this one can take it in between).
 */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startClusterOnce(options);
    } catch (error) {
      if (attempt >= 3 || !/address already in use/.test((error as Error).message)) {
        throw error;
      }
    }
  }
}

async function startClusterOnce(options: ClusterOptions): Promise<Cluster> {
  const bin = binaries();
  const dir = mkdtempSync(join(tmpdir(), 'e2e-cluster-'));
  const logs = join(dir, 'logs');
  mkdirSync(logs);
  const started: Started[] = [];
  const stop = async () => {
    for (const p of [...started].reverse()) {
      await p.stop();
    }
    // E2E_KEEP=1 keeps the logs and data of every platform, to read after a failure.
    if (!process.env.E2E_KEEP) {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  try {
    const [clientPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${clientPort}`;
    const etcd = start('etcd', bin.etcd, [
      '--name=e2e',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=e2e=http://127.0.0.1:${peerPort}`,
      '--log-level=warn',
      '--unsafe-no-fsync', // a throwaway store: no need to wait for the disk
    ], logs);
    started.push(etcd);
    await waitFor(`etcd (${etcd.tail(5)})`, async () => (await fetch(`${etcdUrl}/health`)).ok);

    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(join(dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
    writeFileSync(join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
    const users: User[] = [{ name: ADMIN, groups: ['system:masters'] }, ...(options.users ?? [])];
    const tokens = new Map(users.map((u) => [u.name, randomBytes(16).toString('hex')]));
    writeFileSync(
      join(dir, 'tokens.csv'),
      users.map((u) => `${tokens.get(u.name)},${u.name},${u.name}${u.groups.length ? `,"${u.groups.join(',')}"` : ''}`).join('\n') + '\n',
    );

    const server = `https://127.0.0.1:${apiPort}`;
    const apiserverArgs = [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      `--advertise-address=${options.pods?.advertiseAddress ?? '127.0.0.1'}`,
      `--secure-port=${apiPort}`,
      `--cert-dir=${join(dir, 'certs')}`,
      `--service-cluster-ip-range=${options.serviceClusterIpRange ?? '10.0.0.0/24'}`,
      '--authorization-mode=Node,RBAC',
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      `--service-account-issuer=${server}`,
      `--service-account-key-file=${join(dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
      // Without Pods no controller creates the `default` ServiceAccount, and no Pod needs a token.
      ...(options.pods ? [] : ['--disable-admission-plugins=ServiceAccount']),
      '--allow-privileged=true',
    ];
    if (options.pods) {
      writeFileSync(join(dir, 'egress.yaml'), egressSelection(join(dir, EGRESS_SOCKET)));
      // A node's name resolves nowhere: reach kubelets by their InternalIP, through the egress proxy.
      apiserverArgs.push(`--egress-selector-config-file=${join(dir, 'egress.yaml')}`, '--kubelet-preferred-address-types=InternalIP,Hostname');
    }
    const auditLog = options.auditLog ? join(dir, 'audit.log') : undefined;
    if (auditLog) {
      writeFileSync(join(dir, 'audit-policy.yaml'), AUDIT_WRITES);
      // The log backend blocks each request until its event is written: a write answered is a write logged.
      apiserverArgs.push(`--audit-policy-file=${join(dir, 'audit-policy.yaml')}`, `--audit-log-path=${auditLog}`, '--audit-log-mode=blocking');
    }
    let apiserver = start('kube-apiserver', bin.kubeApiserver, apiserverArgs, logs);
    started.push(apiserver);
    const apiserverReady = () =>
      waitFor(`kube-apiserver /readyz (${apiserver.tail(5)})`, async () => (await get(`${server}/readyz`, tokens.get(ADMIN)!)) === 200, 90_000);
    await apiserverReady();
    let restarts = 0;
    const restartApiserver = async () => {
      await apiserver.stop();
      apiserver = start(`kube-apiserver-${++restarts}`, bin.kubeApiserver, apiserverArgs, logs);
      started.push(apiserver);
      await apiserverReady();
    };
    const compactEtcd = async () => {
      const range = (await (await fetch(`${etcdUrl}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: Buffer.from('/').toString('base64') }) })).json()) as { header: { revision: string } };
      await fetch(`${etcdUrl}/v3/kv/compaction`, { method: 'POST', body: JSON.stringify({ revision: range.header.revision, physical: true }) });
    };

    const kubeconfigs = new Map<string, string>();
    for (const user of users) {
      const file = join(dir, `kubeconfig-${user.name.replace(/[^A-Za-z0-9_.-]/g, '_')}`);
      writeFileSync(file, kubeconfigYaml(server, user.name, tokens.get(user.name)!));
      kubeconfigs.set(user.name, file);
    }

    // The self-signed serving certificate (written by the apiserver at its first start) and its CA.
    const servingCa = join(dir, 'certs', 'apiserver.crt');
    if (options.controllerManager || options.pods) {
      const controllers = ['clusterrole-aggregation-controller', 'garbage-collector-controller', 'namespace-controller', 'resourcequota-controller'];
      if (options.pods) {
        // node-lifecycle-controller: kubelet registers its Node tainted not-ready, and only this
        // controller lifts the taint once the Node reports Ready.
        // job-controller: the metallb-iad chart's adoption Job.
        controllers.push('deployment-controller', 'replicaset-controller', 'job-controller', 'serviceaccount-controller', 'root-ca-certificate-publisher-controller', 'endpointslice-controller', 'node-lifecycle-controller');
      }
      const kcm = start('kube-controller-manager', bin.kubeControllerManager, [
        `--kubeconfig=${kubeconfigs.get(ADMIN)}`,
        // resourcequota-controller: a quota's usage (status.used) is the controller's to compute;
        // the apiserver's ResourceQuota admission refuses what a quota without it would count.
        `--controllers=${controllers.join(',')}`,
        // What kube-root-ca.crt carries into every Pod's token volume.
        ...(options.pods ? [`--root-ca-file=${servingCa}`] : []),
        // It counts a custom resource only once discovery (every 30 s) has shown it, and a quota
        // synced before then has no usage for it until the full resync: 10 s here, not 5 min.
        '--resource-quota-sync-period=10s',
        '--leader-elect=false',
        '--secure-port=0',
        '--use-service-account-credentials=false',
      ], logs);
      started.push(kcm);
    }
    if (options.pods) {
      const scheduler = start('kube-scheduler', nodeBinaries().kubeScheduler, [`--kubeconfig=${kubeconfigs.get(ADMIN)}`, '--leader-elect=false', '--secure-port=0'], logs);
      started.push(scheduler);
    }

    const kubeconfig = (user = ADMIN) => {
      const file = kubeconfigs.get(user);
      if (!file) {
        throw new Error(`no such e2e user ${user}`);
      }
      return file;
    };
    return {
      server,
      dir,
      auditLog,
      egressSocket: options.pods ? join(dir, EGRESS_SOCKET) : undefined,
      restartApiserver,
      compactEtcd,
      kubeconfig,
      client(user = ADMIN) {
        const kc = new k8s.KubeConfig();
        kc.loadFromFile(kubeconfig(user));
        return kc;
      },
      stop,
    };
  } catch (error) {
    const tails = started.map((p) => `--- ${p.name}\n${p.tail(20)}`).join('\n');
    await stop();
    throw new Error(`${(error as Error).message}\n${tails}`);
  }
}

/** Every write, who made it and on what (Metadata level: no bodies); nothing else. */
const AUDIT_WRITES = JSON.stringify({
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  omitStages: ['RequestReceived'],
  rules: [{ level: 'Metadata', verbs: ['create', 'update', 'patch', 'delete', 'deletecollection'] }, { level: 'None' }],
});

/** The apiserver's `cluster` egress (to nodes, pods, services) through an HTTP CONNECT proxy on a unix socket. */
function egressSelection(socket: string): string {
  return JSON.stringify({
    apiVersion: 'apiserver.k8s.io/v1beta1',
    kind: 'EgressSelectorConfiguration',
    egressSelections: [{ name: 'cluster', connection: { proxyProtocol: 'HTTPConnect', transport: { uds: { udsName: socket } } } }],
  });
}

function kubeconfigYaml(server: string, user: string, token: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'e2e', cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: 'e2e', context: { cluster: 'e2e', user } }],
    'current-context': 'e2e',
  });
}

/** GET over TLS with the apiserver's self-signed serving certificate. */
function get(url: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}` }, rejectUnauthorized: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}
