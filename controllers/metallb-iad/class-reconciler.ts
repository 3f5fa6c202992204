/** Renders one IPAddressPool (autoAssign false) and L2Advertisement per served class (metallb-iad.md §3). */
import type { EventRecorder } from '../runtime/events.js';
import type { ReconcileResult } from '../runtime/controller.js';
import { parseClassParameters, renderBackend, servedBy } from './decisions.js';
import type { DriverCluster } from './cluster.js';

export class ClassReconciler {
  private readonly reported = new Map<string, string>();

  constructor(
    private readonly store: DriverCluster,
    private readonly events: EventRecorder,
  ) {}

  async reconcile(name: string): Promise<ReconcileResult | void> {
    const ipClass = this.store.ipClass(name);
    if (!ipClass || ipClass.metadata.deletionTimestamp || !servedBy(ipClass)) {
      return; // the pool and advertisement go with the class (ownerReferences)
    }
    const parameters = parseClassParameters(ipClass);
    if (!parameters.ok) {
      // Nothing is written: a half-written pool would be worse than none.
      if (this.reported.get(name) !== parameters.message) {
        this.reported.set(name, parameters.message);
        this.events.event(ipClass, 'Warning', 'InvalidClassParameters', parameters.message);
      }
      return;
    }
    this.reported.delete(name);
    const { pool, advertisement } = renderBackend(ipClass, this.store.metallbNamespace, parameters.addresses);
    const current = this.store.pool(name);
    if (JSON.stringify(current?.spec) !== JSON.stringify(pool.spec) || !current?.metadata.ownerReferences?.length) {
      await this.store.apply(pool);
    }
    await this.store.apply(advertisement);
  }
}
