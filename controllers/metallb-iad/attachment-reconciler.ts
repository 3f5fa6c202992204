/**
 * The claim's side of the verdict (attachment.ts): `status.associatedTo` (and,
 * for a Shared claim, `status.sharedWith`) and the Attached condition, written only when what they say changes, so a
 * re-applied Service costs the claim no write.
 */
import type { V1Service } from '@kubernetes/client-node';
import { claimKey, holdersOf, IP_ADDRESS_CLAIM_ANNOTATION, PROVISIONER_ANNOTATION, sameHolders, withHolders } from '../../api/v1alpha1/index.js';
import type { Controller } from '../runtime/controller.js';
import { splitKey } from '../runtime/kube.js';
import type { Manager } from '../runtime/manager.js';
import { claimAttachment, saysAlready, withCondition } from './attachment.js';
import type { DriverClusterStore } from './cluster-store.js';
import { isPlaceholder } from './placeholders.js';
import type { DriverStore } from './store.js';
import { ATTACHED_CONDITION, DRIVER } from './well-known.js';

export class AttachmentReconciler {
  constructor(private readonly store: DriverStore) {}

  async reconcile(key: string): Promise<void> {
    const { namespace = '', name } = splitKey(key);
    const claim = this.store.claim(namespace, name);
    const provisioner = claim?.metadata.annotations?.[PROVISIONER_ANNOTATION];
    if (!claim || claim.metadata.deletionTimestamp || (provisioner !== undefined && provisioner !== DRIVER)) {
      return;
    }
    const said = claimAttachment(this.store, claim);
    if (saysAlready(claim.status?.conditions, ATTACHED_CONDITION, said.condition) && sameHolders(holdersOf(claim.status), said.carriers)) {
      return;
    }
    const conditions = withCondition(claim.status?.conditions, ATTACHED_CONDITION, said.condition, new Date().toISOString(), claim.metadata.generation);
    await this.store.updateClaimStatus({ ...claim, status: withHolders({ ...claim.status, conditions }, said.carriers) });
  }
}

/**
 * The attachment controller and what wakes it: claims; a Service maps to the
 * claim it names and the one it named before; an address to its claim (its
 * association changed).
 */
export function setupAttachmentController(manager: Manager, store: DriverClusterStore): Controller {
  const named = (service: V1Service | undefined) => {
    const claim = service?.metadata?.annotations?.[IP_ADDRESS_CLAIM_ANNOTATION];
    return claim ? [claimKey(service!.metadata!.namespace!, claim)] : [];
  };
  return manager
    .controller('iad-attachment')
    .for(store.claims)
    .watches(store.services, (service, previous) => [...new Set([...named(service), ...named(previous)])], {
      when: (s) => !isPlaceholder(s, store.placeholderNamespace),
    })
    .watches(store.addresses, (address) => {
      const ref = address.spec.claimRef;
      return ref ? [claimKey(ref.namespace, ref.name)] : [];
    })
    .complete(new AttachmentReconciler(store));
}
