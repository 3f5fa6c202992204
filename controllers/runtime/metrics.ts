/** Prometheus metrics of a controller process, on their own registry. */
import type { ConnectionCounters } from './connections.js';
import { getHeapStatistics } from 'node:v8';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconcileTotal = new Counter({
    name: 'controller_runtime_reconcile_total',
    help: 'Reconcile passes by controller and result.',
    labelNames: ['controller', 'result'],
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    name: 'controller_runtime_reconcile_errors_total',
    help: 'Reconcile passes that returned an error.',
    labelNames: ['controller'],
    registers: [this.registry],
  });
  readonly reconcileDuration = new Histogram({
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Time per reconcile pass.',
    labelNames: ['controller'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'workqueue_depth',
    help: 'Keys waiting in the work queue.',
    labelNames: ['name'],
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'leader_election_master_status',
    help: '1 while this process holds the Lease.',
    labelNames: ['name'],
    registers: [this.registry],
  });

  /**
   * V8's ceiling for the heap. Node 20 derives it from the cgroup's memory limit when there is one
   * (about two thirds of it), so in a Pod it follows the chart's resources.limits.memory: an admin
   * can see that the heap cannot outgrow the container before the kernel's OOM killer does.
   */
  readonly heapLimit = new Gauge({
    name: 'nodejs_heap_size_limit_bytes',
    help: "V8's heap size limit (follows the container's memory limit).",
    registers: [this.registry],
    collect() {
      this.set(getHeapStatistics().heap_size_limit);
    },
  });

  readonly connectionsOpened = new Counter({
    name: 'rest_client_connections_total',
    help: 'Connections opened to the apiserver (one keep-alive pool per process).',
    registers: [this.registry],
  });
  readonly connectionsOpen = new Gauge({
    name: 'rest_client_connections_open',
    help: 'Connections to the apiserver open now.',
    registers: [this.registry],
  });
  readonly tlsHandshakes = new Counter({
    name: 'rest_client_tls_handshakes_total',
    help: 'TLS handshakes with the apiserver.',
    registers: [this.registry],
  });

  /** The connection pool's counters (controllers/runtime/connections.ts). */
  get connectionCounters(): ConnectionCounters {
    return {
      connectionOpened: () => {
        this.connectionsOpened.inc();
        this.connectionsOpen.inc();
      },
      connectionClosed: () => this.connectionsOpen.dec(),
      handshake: () => this.tlsHandshakes.inc(),
    };
  }

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}
