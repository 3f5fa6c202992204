/**
 * Runs a controller process: probes and metrics servers, informers (caches
 * fill before leadership, as in controller-runtime), leader election, the
 * controllers' workers; and a graceful stop on SIGTERM: stop taking work,
 * finish what is in flight, release the Lease, stop the informers.
 */
import type { Server } from 'node:http';
import type * as k8s from '@kubernetes/client-node';
import { ControllerBuilder, type ControllerRegistry, type EventSource } from './builder.js';
import { Controller, type ReconcileResult } from './controller.js';
import { close, serveMetrics, serveProbes } from './http.js';
import { Informer } from './informer.js';
import type { KubeObject } from './kube.js';
import { LeaderElector } from './leader.js';
import type { Logger } from './log.js';
import type { ControllerMetrics } from './metrics.js';

export interface ManagerOptions {
  readonly kubeConfig: k8s.KubeConfig;
  readonly log: Logger;
  readonly metrics: ControllerMetrics;
  readonly probeAddress?: { host: string; port: number };
  readonly metricsAddress?: { host: string; port: number };
  /** Absent: run without electing (a single replica). */
  readonly leaderElection?: { namespace: string; name: string; identity: string };
  /** Workers per controller. @default 1 */
  readonly concurrency?: number;
}

export class Manager implements ControllerRegistry {
  private readonly informers: Informer<KubeObject>[] = [];
  /** Informers the controllers can run without: started, never waited for, not part of readiness. */
  private readonly optionalInformers: Informer<KubeObject>[] = [];
  private readonly controllers: Controller[] = [];
  private servers: Server[] = [];
  private elector: LeaderElector | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: ManagerOptions) {}

  /**
   * An `optional` informer watches a resource the cluster may not serve (an
   * older version of a dependency's CRDs): its list keeps retrying with backoff
   * while the controllers run on without it.
   */
  addInformer<T extends KubeObject>(informer: Informer<T>, options: { optional?: boolean } = {}): void {
    (options.optional ? this.optionalInformers : this.informers).push(informer as unknown as Informer<KubeObject>);
  }

  addController(controller: Controller): void {
    this.controllers.push(controller);
  }

  /** Declares a controller (builder.ts): `.for(...)`, `.owns(...)`, `.watches(...)`, then `.complete(reconciler)`. */
  controller(name: string): ControllerBuilder {
    return new ControllerBuilder(this, name);
  }

  newController(name: string, reconcile: (key: string) => Promise<ReconcileResult | void>): Controller {
    return new Controller(name, reconcile, this.options.log.with({ controller: name }), this.options.metrics);
  }

  /** A completed controller and its sources: each informer once, as required unless added optional before. */
  register(controller: Controller, sources: readonly EventSource<never>[]): void {
    this.addController(controller);
    for (const source of sources) {
      const known = [...this.informers, ...this.optionalInformers] as unknown[];
      if (source instanceof Informer && !known.includes(source)) {
        this.informers.push(source as unknown as Informer<KubeObject>);
      }
    }
  }

  get ready(): boolean {
    return this.informers.every((i) => i.hasSynced);
  }

  /** Starts everything; resolves once the controllers run (after winning the Lease, if electing). */
  async start(onFatal: (reason: string) => void): Promise<void> {
    const { log } = this.options;
    if (this.options.probeAddress) {
      this.servers.push(await serveProbes(this.options.probeAddress, () => this.ready));
    }
    if (this.options.metricsAddress) {
      this.servers.push(await serveMetrics(this.options.metricsAddress, this.options.metrics));
    }
    for (const informer of [...this.informers, ...this.optionalInformers]) {
      informer.start();
    }
    await Promise.all(this.informers.map((i) => i.synced));
    log.info('caches synced');
    if (this.options.leaderElection) {
      this.elector = new LeaderElector({ kubeConfig: this.options.kubeConfig, log, ...this.options.leaderElection });
      const name = this.options.leaderElection.name;
      await this.elector.run(() => {
        this.options.metrics.leader.set({ name }, 0);
        onFatal('lost leadership');
      });
      this.options.metrics.leader.set({ name }, 1);
    }
    if (this.stopping) {
      return;
    }
    for (const controller of this.controllers) {
      controller.start(this.options.concurrency ?? 1);
    }
    log.info('controllers started', { controllers: this.controllers.map((c) => c.name), workers: this.options.concurrency ?? 1 });
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const { log } = this.options;
      log.info('shutting down');
      await Promise.all(this.controllers.map((c) => c.stop()));
      await this.elector?.release();
      await Promise.all([...this.informers, ...this.optionalInformers].map((i) => i.stop()));
      await Promise.all(this.servers.map(close));
      log.info('stopped');
    })();
    return this.stopping;
  }
}
