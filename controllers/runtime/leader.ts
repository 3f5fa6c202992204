/**
 * Lease-based leader election, client-go's algorithm (docs/runtime.md):
 * acquire or renew every retry period with resourceVersion as the lock; a
 * foreign Lease counts as expired only when its record has not changed for a
 * whole lease duration as observed here (not by its timestamps: clocks skew);
 * a leader that cannot renew within the renew deadline stops leading; on
 * shutdown the Lease is released so a successor need not wait it out.
 */
import * as k8s from '@kubernetes/client-node';
import { apiError, isConflict, isNotFound } from './kube.js';
import type { Logger } from './log.js';

export interface LeaderElectionOptions {
  readonly kubeConfig: k8s.KubeConfig;
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly log: Logger;
  /** @default 15000 */
  readonly leaseDurationMs?: number;
  /** @default 10000 */
  readonly renewDeadlineMs?: number;
  /** @default 2000 */
  readonly retryPeriodMs?: number;
}

export class LeaderElector {
  private readonly api: k8s.CoordinationV1Api;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private observedRecord = '';
  private observedAt = 0;
  private leading = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private lastRenew = 0;
  /** The attempt under way, so release() never races a renewal it would then lose to. */
  private attempt: Promise<boolean> = Promise.resolve(false);

  constructor(private readonly options: LeaderElectionOptions) {
    this.api = options.kubeConfig.makeApiClient(k8s.CoordinationV1Api);
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /**
   * Resolves once this process leads; `onLost` runs if leadership is lost later
   * (the caller exits, as controller-runtime does).
   */
  run(onLost: () => void): Promise<void> {
    return new Promise((resolve) => {
      const tick = async () => {
        if (this.stopped) {
          return;
        }
        this.attempt = this.tryAcquireOrRenew().catch((error: unknown) => {
          this.options.log.warn('lease update failed', { lease: this.options.name, error: apiError(error) });
          return false;
        });
        const ok = await this.attempt;
        if (this.stopped) {
          return; // released meanwhile: release() owns the Lease's last write
        }
        const now = Date.now();
        if (ok) {
          this.lastRenew = now;
          if (!this.leading) {
            this.leading = true;
            this.options.log.info('became leader', { lease: this.options.name, identity: this.options.identity });
            resolve();
          }
        } else if (this.leading && now - this.lastRenew > this.renewDeadlineMs) {
          this.leading = false;
          this.options.log.error('lost leadership', { lease: this.options.name });
          this.stopped = true;
          onLost();
          return;
        }
        this.timer = setTimeout(tick, this.retryPeriodMs);
      };
      void tick();
    });
  }

  /** Stops renewing and, if leading, hands the Lease back. */
  async release(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    // A renewal in flight would otherwise land after the release (or make it
    // conflict), leaving the Lease held by a process that has stopped.
    const renewed = await this.attempt;
    if (!this.leading && !renewed) {
      return;
    }
    this.leading = false;
    try {
      const lease = await this.api.readNamespacedLease({ name: this.options.name, namespace: this.options.namespace });
      if (lease.spec?.holderIdentity !== this.options.identity) {
        return;
      }
      lease.spec = { ...lease.spec, holderIdentity: undefined, leaseDurationSeconds: 1, renewTime: new k8s.V1MicroTime() };
      await this.api.replaceNamespacedLease({ name: this.options.name, namespace: this.options.namespace, body: lease });
      this.options.log.info('released the lease', { lease: this.options.name });
    } catch (error) {
      this.options.log.warn('lease release failed', { error: apiError(error) });
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.options;
    const leaseDurationSeconds = Math.round(this.leaseDurationMs / 1000);
    const now = new k8s.V1MicroTime();
    let lease: k8s.V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace });
    } catch (error) {
      if (!isNotFound(error)) {
        throw error;
      }
      await this.api.createNamespacedLease({
        namespace,
        body: {
          metadata: { name, namespace },
          spec: { holderIdentity: identity, leaseDurationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 },
        },
      });
      return true;
    }
    const spec = lease.spec ?? {};
    const record = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.leaseDurationSeconds]);
    if (record !== this.observedRecord) {
      this.observedRecord = record;
      this.observedAt = Date.now();
    }
    const holder = spec.holderIdentity;
    const heldByOther = Boolean(holder) && holder !== identity;
    const duration = (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
    if (heldByOther && Date.now() - this.observedAt < duration) {
      return false;
    }
    lease.spec = {
      holderIdentity: identity,
      leaseDurationSeconds,
      acquireTime: holder === identity && spec.acquireTime ? new k8s.V1MicroTime(spec.acquireTime) : now,
      renewTime: now,
      leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === identity ? 0 : 1),
    };
    try {
      await this.api.replaceNamespacedLease({ name, namespace, body: lease });
    } catch (error) {
      if (isConflict(error)) {
        return false; // someone else wrote first
      }
      throw error;
    }
    return true;
  }
}
