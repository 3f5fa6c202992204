/**
 * What both controller entrypoints do around their controllers: the shared
 * flags, the kubeconfig, leader election settings, and the process lifecycle
 * (start the manager; on SIGTERM or SIGINT stop it and exit 0; on a fatal
 * error such as lost leadership stop it and exit 1).
 */
import { isDnsLabel } from '../../api/names.js';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import * as k8s from '@kubernetes/client-node';
import type { Argv } from 'yargs';
import { shareConnections } from './connections.js';
import { switchValueProblem, type YargsInternals } from '../../lib/flags.js';
import { VERSION } from '../../lib/version.js';
import { parseBindAddress } from './http.js';
import { createLogger, type Logger, type LogLevel } from './log.js';
import { Manager } from './manager.js';
import { ControllerMetrics } from './metrics.js';

/** The flags every controller takes (docs/binding.md). */
export function commonFlags<T>(parser: Argv<T>, leaderElectionId: string) {
  return parser
    .option('kubeconfig', { type: 'string', describe: 'Kubeconfig file (default: in-cluster, then $KUBECONFIG)' })
    .option('leader-elect', { type: 'boolean', default: false, describe: 'Elect a leader through a Lease' })
    .option('leader-election-namespace', { type: 'string', describe: 'Namespace of the Lease (default: $POD_NAMESPACE)' })
    .option('leader-election-id', { type: 'string', default: leaderElectionId, describe: 'Name of the Lease' })
    .option('metrics-bind-address', { type: 'string', default: '0', describe: 'Metrics address, e.g. :8080; 0 disables' })
    .option('health-probe-bind-address', { type: 'string', default: ':8081', describe: '/healthz and /readyz address' })
    .option('concurrency', {
      type: 'number',
      default: DEFAULT_CONCURRENCY,
      describe: 'Workers per controller; a key is never reconciled by two at once',
    })
    .option('log-level', { choices: ['debug', 'info', 'warn', 'error'] as const, default: 'info' as LogLevel })
    .check((args) => {
      const workers = args.concurrency;
      if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
        throw new Error(`--concurrency ${JSON.stringify(workers)}: a whole number from 1 to 64`);
      }
      const namespace = args['leader-election-namespace'];
      if (namespace !== undefined) {
        checkNamespaceFlag('leader-election-namespace', namespace);
      }
      return true;
    })
    .strict()
    .version('version', 'Print the version and exit', VERSION);
}

/**
 * Parses a controller's flags: --help and --version print and exit 0; a bad
 * flag (unknown, missing its value, a switch given junk, a check that fails)
 * is one line on stderr and exit 2, as Go's flag package does.
 */
export async function parseFlags<T>(name: string, parser: Argv<T>, argv: readonly string[]): Promise<T> {
  const refuse = (message: string): never => {
    process.stderr.write(`${name}: ${message} (see ${name} --help)\n`);
    process.exit(2);
  };
  const options = (parser as unknown as YargsInternals).getOptions();
  const switches = new Set(options.boolean);
  const problem = switchValueProblem(argv, switches);
  if (problem) {
    refuse(problem);
  }
  const valued = Object.keys(options.key).filter((key) => !switches.has(key));
  return (await parser
    .requiresArg(valued)
    .fail((message, error) => refuse(message ?? error?.message ?? 'invalid flags'))
    .parseAsync()) as T;
}

/**
 * Workers per controller, chosen with the core bench (BENCH_CONCURRENCY, ours alone, medians):
 * at N = 100, 4 → 95 claims/s, 8 → 136, 16 → ~150 (4 held a 1-second burst back: 1.8× the Go
 * upstream against issue 25's 2×); at N = 1,000, 4 → 132, 8 → 143; at N = 3,000, 4 → 123,
 * 8 → 139, both 2.4–2.5 ms CPU per claim and 105 MiB peak RSS. 16 adds nothing over 8 beyond
 * N = 100 and costs CPU per claim (3.0 ms at N = 1,000 against 2.2).
 */
export const DEFAULT_CONCURRENCY = 8;

/** A namespace flag must name a valid namespace (a DNS-1123 label), or the process does not start. */
export function checkNamespaceFlag(flag: string, value: unknown): void {
  if (typeof value !== 'string' || !isDnsLabel(value)) {
    throw new Error(`--${flag} ${JSON.stringify(value)}: not a namespace name (lowercase letters, digits and '-', at most 63)`);
  }
}

export interface CommonArgs {
  kubeconfig?: string;
  'leader-elect': boolean;
  'leader-election-namespace'?: string;
  'leader-election-id': string;
  'metrics-bind-address': string;
  'health-probe-bind-address': string;
  'log-level': LogLevel;
  concurrency: number;
}

export interface ControllerProcess {
  readonly log: Logger;
  readonly kubeConfig: k8s.KubeConfig;
  readonly metrics: ControllerMetrics;
  readonly manager: Manager;
}

/** Builds the logger, kubeconfig, metrics and manager from the common flags. */
export function controllerProcess(name: string, args: CommonArgs): ControllerProcess {
  const log = createLogger(args['log-level'], { logger: name });
  const metrics = new ControllerMetrics();
  const kubeConfig = shareConnections(loadKubeConfig(args.kubeconfig), { counters: metrics.connectionCounters });
  // Unique per process, as controller-runtime's hostname_uuid: in a container the pid is the same
  // (1) after every restart, and a restarted container taking its predecessor's identity would
  // resume a lease it never held, beside the replica waiting for it to expire.
  const identity = `${process.env.POD_NAME ?? hostname()}_${randomUUID()}`;
  let leaderElection: { namespace: string; name: string; identity: string } | undefined;
  if (args['leader-elect']) {
    const namespace = args['leader-election-namespace'] ?? process.env.POD_NAMESPACE;
    if (!namespace) {
      throw new Error('--leader-elect needs --leader-election-namespace or $POD_NAMESPACE');
    }
    leaderElection = { namespace, name: args['leader-election-id'], identity };
  }
  log.info('starting', {
    version: VERSION,
    node: process.version,
    identity,
    server: kubeConfig.getCurrentCluster()?.server,
    user: kubeConfig.getCurrentUser()?.name,
    // yargs gives each flag twice (kebab and camelCase) plus _ and $0: the flags as typed.
    flags: Object.fromEntries(Object.entries(args).filter(([key]) => /^[a-z]+(-[a-z]+)*$/.test(key))),
  });
  const manager = new Manager({
    kubeConfig,
    log,
    metrics,
    probeAddress: parseBindAddress('health-probe-bind-address', args['health-probe-bind-address']),
    metricsAddress: parseBindAddress('metrics-bind-address', args['metrics-bind-address']),
    leaderElection,
    concurrency: args.concurrency,
  });
  return { log, kubeConfig, metrics, manager };
}

/**
 * The kubeconfig from --kubeconfig, else $KUBECONFIG, ~/.kube/config or the
 * in-cluster ServiceAccount. Fails at once with one line when there is none,
 * as controller-runtime does ("unable to get kubeconfig"): client-node would
 * otherwise fall back to http://localhost:8080 and retry against it forever.
 */
export function loadKubeConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): k8s.KubeConfig {
  const kubeConfig = new k8s.KubeConfig();
  try {
    if (file) {
      kubeConfig.loadFromFile(file);
    } else {
      kubeConfig.loadFromDefault();
    }
  } catch (error) {
    throw new Error(`unable to get kubeconfig: ${file ?? env.KUBECONFIG ?? 'default locations'}: ${(error as Error).message}`);
  }
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster?.server) {
    throw new Error(`unable to get kubeconfig: ${file ?? env.KUBECONFIG ?? 'default locations'}: no current context with a cluster server`);
  }
  if (!file && cluster.name === 'cluster' && cluster.server === 'http://localhost:8080') {
    throw new Error('unable to get kubeconfig: pass --kubeconfig, set $KUBECONFIG, provide ~/.kube/config, or run in a Pod with a ServiceAccount');
  }
  return kubeConfig;
}

/** How long a stop may take before the process exits anyway (SIGTERM must end within 2 s). */
export const SHUTDOWN_GRACE_MS = 1_500;

/** Starts the manager and stops it on a signal (exit 0) or a fatal error (exit 1). */
export async function runUntilSignalled({ manager, log }: ControllerProcess): Promise<void> {
  let exiting = false;
  const shutdown = (reason: string, code: number) => {
    if (exiting) {
      return;
    }
    exiting = true;
    log.info('stopping', { reason });
    // Within SHUTDOWN_GRACE_MS whatever the state (a lease release or a write the
    // apiserver never answers included): well inside terminationGracePeriodSeconds.
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        log.warn('stop did not finish in time; exiting anyway', { graceMs: SHUTDOWN_GRACE_MS });
        resolve();
      }, SHUTDOWN_GRACE_MS);
    });
    Promise.race([manager.stop().finally(() => clearTimeout(timer)), deadline]).then(
      () => process.exit(code),
      (error: unknown) => {
        log.error('shutdown failed', { error: String(error) });
        process.exit(1);
      },
    );
  };
  // The informers' retry timers are unref'd (stop() must never wait on them); with probes and
  // metrics off, nothing else would keep the process alive while the apiserver is unreachable,
  // and it would exit 0 as if done.
  setInterval(() => undefined, 1 << 30);
  process.on('SIGTERM', () => shutdown('SIGTERM', 0));
  process.on('SIGINT', () => shutdown('SIGINT', 0));
  await manager.start((reason) => {
    log.error('fatal', { reason });
    shutdown(reason, 1);
  });
}

/** Runs an entrypoint's main; a startup failure is one JSON log line and exit 1, never a stack trace loop. */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    process.stderr.write(
      JSON.stringify({ ts: new Date().toISOString(), level: 'error', msg: 'startup failed', error: String((error as Error)?.message ?? error) }) + '\n',
    );
    process.exit(1);
  });
}
