/**
 * Installs a package the way Cozystack's operator and Flux's helm-controller do.
 * Neither Go module is served by the module proxy, so both are emulated from
 * their source:
 * - the platform chart renders the Secret cozy-system/cozystack-values
 *   (templates/apps.yaml; here rendered from the Cozystack checkout itself) and
 *   the operator's CozyValuesReplicator copies it into every system namespace;
 * - the PackageReconciler gives every HelmRelease `valuesFrom: Secret
 *   cozystack-values` (key values.yaml) plus the Package's component values as
 *   `spec.values` (internal/operator/package_reconciler.go);
 * - helm-controller reads the Secret from the apiserver and merges chart
 *   defaults < valuesFrom < spec.values before installing: `helm install -f
 *   <secret's values.yaml> -f <spec.values>` merges in the same order.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { resolveHelm } from '../../../hack/helm.js';
import { checkCheckout, renderCozystackValues } from '../../../hack/lib/cozystack-checkout.js';
import { helmAsync } from '../../support/helm.js';
import { REPO_ROOT } from '../../support/synth.js';

export const COZYSTACK_VALUES = 'cozystack-values';

/** The Cozystack checkout the platform values come from: $COZYSTACK_DIR, else the snapshot beside this repository. */
export function cozystackCheckout(): string {
  const dir = process.env.COZYSTACK_DIR ?? join(REPO_ROOT, '..', 'shared', 'cozystack-snapshot');
  checkCheckout(dir);
  return dir;
}

let rendered: string | undefined;
/** values.yaml of the cozystack-values Secret, as the checkout's platform chart renders it for isp-full. */
export function cozystackValues(): string {
  rendered ??= renderCozystackValues(cozystackCheckout(), resolveHelm());
  return rendered;
}

export interface PackageInstall {
  readonly release: string;
  readonly namespace: string;
  readonly chartDir: string;
  /** The Package's `spec.components.<name>.values`, which become the HelmRelease's `spec.values`. */
  readonly values?: Record<string, unknown>;
}

/** What the replicator does: the Secret, labelled for Flux to watch, in the install namespace. */
export async function replicateCozystackValues(core: k8s.CoreV1Api, namespace: string): Promise<void> {
  await core.createNamespacedSecret({
    namespace,
    body: {
      metadata: { name: COZYSTACK_VALUES, namespace, labels: { 'reconcile.fluxcd.io/watch': 'Enabled' } },
      type: 'Opaque',
      stringData: { 'values.yaml': cozystackValues() },
    },
  });
}

/** helm-controller's install of the operator's HelmRelease: valuesFrom the Secret as stored, then spec.values. */
export async function installAsOperator(core: k8s.CoreV1Api, kubeconfig: string, install: PackageInstall): Promise<void> {
  await releaseAsOperator('install', core, kubeconfig, install);
}

/**
 * helm-controller's upgrade when the HelmRelease's spec.values change (the
 * Package's component values edited): the same layering, values as given now
 * (helm-controller never reuses the previous release's values).
 */
export async function upgradeAsOperator(core: k8s.CoreV1Api, kubeconfig: string, install: PackageInstall): Promise<void> {
  await releaseAsOperator('upgrade', core, kubeconfig, install);
}

async function releaseAsOperator(verb: 'install' | 'upgrade', core: k8s.CoreV1Api, kubeconfig: string, install: PackageInstall): Promise<void> {
  const secret = await core.readNamespacedSecret({ name: COZYSTACK_VALUES, namespace: install.namespace });
  const stored = secret.data?.['values.yaml'];
  if (!stored) {
    throw new Error(`secret ${install.namespace}/${COZYSTACK_VALUES} has no values.yaml`);
  }
  const dir = mkdtempSync(join(tmpdir(), `helmrelease-${install.release}-`));
  const valuesFrom = join(dir, 'values-from.yaml');
  const specValues = join(dir, 'spec-values.yaml');
  writeFileSync(valuesFrom, Buffer.from(stored, 'base64'));
  writeFileSync(specValues, stringify(install.values ?? {}));
  // Not spawnSync: a hook Job runs on the lab's node, which reaches the apiserver through this process.
  const result = await helmAsync(verb, install.release, install.chartDir, '--namespace', install.namespace, '--kubeconfig', kubeconfig, '-f', valuesFrom, '-f', specValues);
  if (result.status !== 0) {
    throw new Error(`helm ${verb} ${install.release} (as the operator's HelmRelease): ${result.stderr}`);
  }
}
