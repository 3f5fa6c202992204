/** Prometheus metrics of a controller process, on their own registry. */
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

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}
