/**
 * The control-plane binaries: $E2E_BIN (what .ci/run builds), else the newest
 * build under .cache/e2e/, with kube-apiserver and etcd taken from
 * $KUBEBUILDER_ASSETS when that folder holds them (the envtest convention).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/synth.js';

export interface Binaries {
  readonly etcd: string;
  readonly kubeApiserver: string;
  readonly kubeControllerManager: string;
  readonly metallbController: string;
  /** MetalLB's CRD manifests, from the same module version. */
  readonly metallbCrds: string;
}

export function binaries(): Binaries {
  const dir = process.env.E2E_BIN ?? newestBuild();
  const assets = process.env.KUBEBUILDER_ASSETS;
  const pick = (name: string, fromAssets: boolean) => {
    const candidates = [...(fromAssets && assets ? [join(assets, name)] : []), ...(dir ? [join(dir, name)] : [])];
    const found = candidates.find((c) => existsSync(c));
    if (!found) {
      throw new Error(`${name} not found (looked in ${candidates.join(', ') || 'nothing'}): run bash hack/e2e/build-binaries.sh`);
    }
    return found;
  };
  return {
    etcd: pick('etcd', true),
    kubeApiserver: pick('kube-apiserver', true),
    kubeControllerManager: pick('kube-controller-manager', true),
    metallbController: pick('metallb-controller', false),
    metallbCrds: pick('metallb-crds', false),
  };
}

function newestBuild(): string | undefined {
  const root = join(REPO_ROOT, '.cache', 'e2e');
  if (!existsSync(root)) {
    return undefined;
  }
  return readdirSync(root)
    .filter((d) => d.startsWith('bin-'))
    .map((d) => join(root, d))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}

/** A binary of the build folder that only some suites need. */
function fromBuild(name: string): string {
  const dir = process.env.E2E_BIN ?? newestBuild();
  const path = dir ? join(dir, name) : undefined;
  if (!path || !existsSync(path)) {
    throw new Error(`${name} not found (looked in ${dir ?? 'nothing'}): run bash hack/e2e/build-binaries.sh`);
  }
  return path;
}

/** The data-path suite's binaries (kube-proxy, MetalLB's speaker), from the same build folder. */
export function dataPathBinaries(): { readonly kubeProxy: string; readonly metallbSpeaker: string } {
  return { kubeProxy: fromBuild('kube-proxy'), metallbSpeaker: fromBuild('metallb-speaker') };
}

/** The node suite's kubelet and kube-scheduler, from the same build folder. */
export function nodeBinaries(): { readonly kubelet: string; readonly kubeScheduler: string } {
  return { kubelet: fromBuild('kubelet'), kubeScheduler: fromBuild('kube-scheduler') };
}
