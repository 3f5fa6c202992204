/**
 * Runs one operation against the cluster as the admin and says what came of
 * it. An API refusal (409, 404, 422, ...) or a connection error during an
 * apiserver restart is an outcome to record, not a failure: random operations
 * often ask for what cannot be done. Only a fault that cannot be carried out
 * (a controller that does not start again) throws.
 */
import { readFileSync, statSync } from 'node:fs';
import * as k8s from '@kubernetes/client-node';
import { canonicalIp, familyOf } from '../../../../api/ip.js';
import { GROUP, VERSION } from '../kube.js';
import { createClaim, createClass, crd, setAdvertisement, type Cr, type MetallbController, type Platform } from '../platform.js';
import type { Controllers } from './controllers.js';
import { isFault, type Operation, type Port, type ServiceShape, type Stack } from './operations.js';
import { ordinal } from './order.js';
import { sleep } from './time.js';
import { ADMIN_NAMESPACE, badClassAddresses, CARRIER_LABEL, CLAIM_ANNOTATION, CLASSES, METALLB_PIN, PINNED_MARKER } from './world.js';

export interface Target {
  readonly platform: Platform;
  readonly controllers: Controllers;
  /** The MetalLB controller of LB_CLASS (setUpWorld), if the world has one. */
  readonly lbMetallb?: MetallbController;
}

export const STACKS: Record<Stack, Pick<k8s.V1ServiceSpec, 'ipFamilyPolicy' | 'ipFamilies'>> = {
  v4: { ipFamilyPolicy: 'SingleStack', ipFamilies: ['IPv4'] },
  v6: { ipFamilyPolicy: 'SingleStack', ipFamilies: ['IPv6'] },
  dual: { ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv4', 'IPv6'] },
  'dual-v6': { ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv6', 'IPv4'] },
  'prefer-dual': { ipFamilyPolicy: 'PreferDualStack', ipFamilies: ['IPv4', 'IPv6'] },
};

/** A selectorless LoadBalancer Service with one port: nothing runs behind it, MetalLB only assigns. */
function loadBalancer(namespace: string, name: string, stack: Stack, annotations: Record<string, string>, lbClass?: string, port: Port = 80): k8s.V1Service {
  return manifest(namespace, name, { type: 'LoadBalancer', stack, port, ...(lbClass ? { lbClass } : {}) }, annotations);
}

/**
 * A tenant Service's manifest as the history last asked for it (the user's file, so to speak): the
 * claim annotation, the type, the families, the port and the loadBalancerClass, and nothing of the
 * driver's. No externalTrafficPolicy (Cluster) and no selector: every Service of a Shared claim has
 * the same backend key, so MetalLB parts them by port alone.
 */
function manifest(namespace: string, name: string, shape: ServiceShape, annotations: Record<string, string> = shape.claim ? { [CLAIM_ANNOTATION]: shape.claim } : {}): k8s.V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, annotations },
    spec: {
      type: shape.type,
      ports: [{ port: shape.port, protocol: 'TCP' }],
      ...STACKS[shape.stack],
      ...(shape.type === 'LoadBalancer' && shape.lbClass ? { loadBalancerClass: shape.lbClass } : {}),
    },
  };
}

/**
 * A JSON merge patch of a Service: only the fields named change, so the driver's pin is never
 * rewritten by us. A port replaces the whole list (a merge patch does not merge lists).
 */
function mergePatch(
  platform: Platform,
  namespace: string,
  name: string,
  patch: { annotations?: Record<string, string | null>; type?: string; stack?: Stack; port?: Port },
) {
  const spec = {
    ...(patch.type ? { type: patch.type } : {}),
    ...(patch.stack ? STACKS[patch.stack] : {}),
    ...(patch.port ? { ports: [{ port: patch.port, protocol: 'TCP' }] } : {}),
  };
  const body = {
    apiVersion: 'v1',
    kind: 'Service',
    // A null annotation removes the key in a merge patch; KubernetesObject's type has no room for null.
    metadata: { name, namespace, ...(patch.annotations ? { annotations: patch.annotations as Record<string, string> } : {}) },
    ...(Object.keys(spec).length > 0 ? { spec } : {}),
  };
  return platform.admin.objects.patch(body, undefined, undefined, 'histories', undefined, k8s.PatchStrategy.MergePatch);
}

/** The driver's keys on a Service, in one text: its pin, its marker and its carrier label. */
function driverKeys(service: k8s.V1Service | undefined): string {
  const a = service?.metadata?.annotations ?? {};
  const keys = [
    a[METALLB_PIN] !== undefined ? `pin ${a[METALLB_PIN]}` : '',
    a[PINNED_MARKER] !== undefined ? `marker ${a[PINNED_MARKER]}` : '',
    service?.metadata?.labels?.[CARRIER_LABEL] !== undefined ? 'carrier label' : '',
  ].filter(Boolean);
  return keys.length > 0 ? keys.join(', ') : 'none of the driver\'s keys';
}

const ingressOf = (service: k8s.V1Service | undefined) => (service?.status?.loadBalancer?.ingress ?? []).map((i) => i.ip).filter(Boolean).join(',') || 'nothing';

const byName = (a: Cr, b: Cr) => ordinal(a.metadata.name!, b.metadata.name!);
const listAddresses = async (platform: Platform) =>
  ((await platform.admin.custom.listClusterCustomObject(crd('ipaddresses'))) as { items: Cr[] }).items.filter((a) => !a.metadata.deletionTimestamp).sort(byName);

/** A ClusterIP Service MetalLB reconciles like any other (it filters none) and never assigns: the restart's probe. */
const PROBE = { namespace: 'default', name: 'histories-metallb-probe' };
/** How long MetalLB may take to come back after an apiserver restart before the history goes on anyway. */
const METALLB_RESUME_MS = 180_000;

/**
 * Waits until MetalLB's controller reconciles again after an apiserver
 * restart: it is told of a change to the probe Service and its log says so.
 * Its client reconnects with a backoff that grows when restarts come close
 * together (a seed with four restarts in five minutes saw it silent for 14,
 * 26, 72 and more than 85 s), longer than a checkpoint lets the ledger settle;
 * the driver cannot undo what MetalLB has not yet looked at, so the history
 * waits for MetalLB, as an operator would, rather than judge MetalLB's pause.
 */
async function metallbResumed({ platform, lbMetallb }: Target): Promise<string> {
  const started = Date.now();
  // Every MetalLB controller logs the start of a Service's reconcile before it asks whether the
  // Service is of its load-balancer class: the one started with --lb-class says so of the probe too.
  const logs = [platform.metallb, ...(lbMetallb ? [lbMetallb.process] : [])].map((p) => ({ file: p.logFile, offset: statSync(p.logFile).size, at: -1 }));
  const needle = `"start reconcile":"${PROBE.namespace}/${PROBE.name}"`;
  let touched = false;
  while (Date.now() - started < METALLB_RESUME_MS) {
    if (!touched) {
      touched = await touchProbe(platform, String(started)).then(() => true, () => false); // the apiserver may still be settling
    }
    for (const log of logs.filter((l) => touched && l.at < 0)) {
      if (readFileSync(log.file).subarray(log.offset).toString('utf8').includes(needle)) {
        log.at = Date.now() - started;
      }
    }
    if (logs.every((l) => l.at >= 0)) {
      return `MetalLB reconciling again after ${logs.map((l) => `${(l.at / 1000).toFixed(1)} s`).join(' and ')}`;
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  return `MetalLB still silent ${METALLB_RESUME_MS / 1000} s after the restart (${logs.filter((l) => l.at < 0).map((l) => l.file.split('/').pop()).join(', ')})`;
}

async function touchProbe(platform: Platform, stamp: string): Promise<void> {
  const annotations = { 'histories.e2e/probe': stamp };
  try {
    await platform.admin.core.createNamespacedService({
      namespace: PROBE.namespace,
      body: { metadata: { ...PROBE, annotations }, spec: { type: 'ClusterIP', ports: [{ port: 80, protocol: 'TCP' }] } },
    });
  } catch (error) {
    if (!(error instanceof k8s.ApiException && error.code === 409)) {
      throw error;
    }
    await mergePatch(platform, PROBE.namespace, PROBE.name, { annotations });
  }
}

/** Applies the operation; the outcome is `ok`, `ok: <what>`, `skipped: <why>`, or the refusal. */
export async function applyOperation(target: Target, op: Operation): Promise<string> {
  if (isFault(op)) {
    return run(target, op); // a controller or apiserver that does not come back ends the history
  }
  try {
    return await run(target, op);
  } catch (error) {
    return refusal(error);
  }
}

async function run(target: Target, op: Operation): Promise<string> {
  const { platform, controllers } = target;
  const { admin } = platform;
  switch (op.kind) {
    case 'createClaim':
      await createClaim(admin, op.name, { className: op.className, family: op.family, ...(op.sharing === 'Shared' ? { sharing: 'Shared' } : {}) }, op.namespace);
      return 'ok';
    case 'setSharing': {
      // A JSON merge patch: KubernetesObject has no room for a spec. No resourceVersion: the switch is the tenant's, not a race to lose.
      const patch = { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddressClaim', metadata: { name: op.name, namespace: op.namespace }, spec: { sharing: op.sharing } } as k8s.KubernetesObject;
      await admin.objects.patch(patch, undefined, undefined, 'histories', undefined, k8s.PatchStrategy.MergePatch);
      return 'ok';
    }
    case 'deleteClaim':
      await admin.custom.deleteNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: op.namespace, name: op.name });
      return 'ok';
    case 'createService':
      await admin.core.createNamespacedService({
        namespace: op.namespace,
        body: loadBalancer(op.namespace, op.name, op.stack, op.claim ? { [CLAIM_ANNOTATION]: op.claim } : {}, op.lbClass, op.port),
      });
      return 'ok';
    case 'reapply':
      return reapply(platform, op);
    case 'replace': {
      // `kubectl replace -f` of the user's file: a PUT with no resourceVersion (a Service takes an
      // unconditional update), the cluster IPs and node ports kept by the apiserver, the driver's keys gone.
      const before = await admin.core.readNamespacedService({ namespace: op.namespace, name: op.name });
      const after = await admin.core.replaceNamespacedService({ namespace: op.namespace, name: op.name, body: manifest(op.namespace, op.name, op.shape) });
      return `ok: carried ${ingressOf(before)} with ${driverKeys(before)}; now ${driverKeys(after)}`;
    }
    case 'setStack':
      return mergePatch(platform, op.namespace, op.name, { stack: op.stack }).then(() => 'ok');
    case 'setPort':
      return mergePatch(platform, op.namespace, op.name, { port: op.port }).then(() => 'ok');
    case 'recreateService': {
      await admin.core.deleteNamespacedService({ namespace: op.namespace, name: op.name });
      // Nothing holds a tenant Service back (no finalizer here): it is gone at once, or nearly.
      for (let i = 0; i < 20; i++) {
        try {
          await admin.core.createNamespacedService({ namespace: op.namespace, body: manifest(op.namespace, op.name, op.shape) });
          return 'ok';
        } catch (error) {
          if (!(error instanceof k8s.ApiException && error.code === 409) || i === 19) {
            throw error;
          }
        }
        await sleep(250);
      }
      return 'ok';
    }
    case 'deleteService':
      await admin.core.deleteNamespacedService({ namespace: op.namespace, name: op.name });
      return 'ok';
    case 'annotate':
      await mergePatch(platform, op.namespace, op.name, { annotations: { [CLAIM_ANNOTATION]: op.claim } });
      return 'ok';
    case 'unannotate':
      await mergePatch(platform, op.namespace, op.name, { annotations: { [CLAIM_ANNOTATION]: null } });
      return 'ok';
    case 'setType':
      // The apiserver drops the node ports and the like itself when a LoadBalancer becomes a ClusterIP.
      await mergePatch(platform, op.namespace, op.name, { type: op.type });
      return 'ok';
    case 'adminPin': {
      const addresses = await listAddresses(platform);
      if (addresses.length === 0) {
        return 'skipped: no IPAddress to pin';
      }
      const address = addresses[op.pick % addresses.length]!;
      const ip = address.spec.address as string;
      await admin.core.createNamespacedService({
        namespace: ADMIN_NAMESPACE,
        body: loadBalancer(ADMIN_NAMESPACE, op.name, familyOf(ip) === 'IPv6' ? 'v6' : 'v4', { [METALLB_PIN]: ip }),
      });
      return `ok: pinned to ${ip} (${address.metadata.name}, ${address.status?.phase ?? 'no phase'})`;
    }
    case 'adminUnpin':
      await admin.core.deleteNamespacedService({ namespace: ADMIN_NAMESPACE, name: op.name });
      return 'ok';
    case 'adminDeleteReleased': {
      const released = (await listAddresses(platform)).filter((a) => a.status?.phase === 'Released');
      if (released.length === 0) {
        return 'skipped: nothing Released';
      }
      const address = released[op.pick % released.length]!;
      await admin.custom.deleteClusterCustomObject({ ...crd('ipaddresses'), name: address.metadata.name! });
      return `ok: deleted ${address.metadata.name}`;
    }
    case 'createBadClass':
      await createClass(admin, op.name, badClassAddresses(op.name, op.shape, op.pick), 'Delete');
      return 'ok';
    case 'deleteBadClass':
      await admin.custom.deleteClusterCustomObject({ ...crd('ipaddressclasses'), name: op.name });
      return 'ok';
    case 'duplicateAddress': {
      const addresses = await listAddresses(platform);
      if (addresses.length === 0) {
        return 'skipped: no IPAddress to duplicate';
      }
      const original = addresses[op.pick % addresses.length]!;
      const ip = original.spec.address as string;
      const spelled = op.mapped && familyOf(ip) === 'IPv4' ? `::ffff:${canonicalIp(ip)}` : ip;
      await admin.custom.createClusterCustomObject({
        ...crd('ipaddresses'),
        body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'IPAddress', metadata: { name: op.name }, spec: { className: original.spec.className, address: spelled, source: { fromClass: {} } } },
      });
      return `ok: ${spelled}, duplicating ${original.metadata.name} (${original.status?.phase ?? 'no phase'})`;
    }
    case 'editClaim':
      return editClaim(platform, op);
    case 'announce':
      await announce(platform, op.className, op.by);
      return 'ok';
    case 'kill':
      return `ok: ${await controllers.kill(op.victim)}`;
    case 'restartApiserver':
      await platform.cluster.restartApiserver();
      return `ok: ${await metallbResumed(target)}`;
  }
}

/**
 * A spec edit the apiserver must refuse: className to another class of the world (or removed),
 * family to another family, addressName set on a claim that has bound addresses (setting it is
 * allowed while it has none: then the edit is skipped). The value depends on the claim as it is,
 * so the edit is always a change. Sent as a merge patch naming the resourceVersion read: a claim
 * that changed meanwhile answers 409, not a verdict on the edit.
 */
async function editClaim(platform: Platform, op: Extract<Operation, { kind: 'editClaim' }>): Promise<string> {
  const claim = (await platform.admin.custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: op.namespace, name: op.name })) as Cr;
  let value: string | null;
  switch (op.field) {
    case 'className': {
      const others = CLASSES.map((c) => c.name).filter((n) => n !== claim.spec.className);
      // One time in four: removed (a merge patch's null), which is refused as well.
      value = op.pick % 4 === 0 ? null : others[op.pick % others.length]!;
      break;
    }
    case 'family': {
      const others = ['IPv4', 'IPv6', 'Dual'].filter((f) => f !== (claim.spec.family ?? 'IPv4'));
      value = others[op.pick % others.length]!;
      break;
    }
    case 'addressName': {
      if (claim.spec.addressName || (claim.status?.addresses ?? []).length === 0) {
        return `skipped: ${claim.spec.addressName ? 'spec.addressName is set already' : 'no bound address (setting spec.addressName is allowed then)'}`;
      }
      const addresses = await listAddresses(platform);
      value = addresses.length > 0 ? addresses[op.pick % addresses.length]!.metadata.name! : 'ip-203-0-113-1';
      break;
    }
  }
  // A JSON merge patch: KubernetesObject has no room for a spec, nor for the null that removes a field.
  const patch = {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'IPAddressClaim',
    metadata: { name: op.name, namespace: op.namespace, resourceVersion: claim.metadata.resourceVersion },
    spec: { [op.field]: value },
  } as k8s.KubernetesObject;
  await platform.admin.objects.patch(patch, undefined, undefined, 'histories', undefined, k8s.PatchStrategy.MergePatch);
  return `ok: spec.${op.field} set to ${JSON.stringify(value)} (it should have been refused)`;
}

/**
 * The Service's manifest again, as a deployment tool does it: server-side apply as
 * `helm-controller`, forced (the driver's keys are another field manager's, so they stay); or a
 * read-modify-write update (as client-side apply or an editor) that sets what the manifest names
 * and keeps the rest, the driver's keys with it. Either way the driver should have nothing to do.
 */
async function reapply(platform: Platform, op: Extract<Operation, { kind: 'reapply' }>): Promise<string> {
  const { admin } = platform;
  const body = manifest(op.namespace, op.name, op.shape);
  if (op.how === 'apply') {
    const before = await admin.core.readNamespacedService({ namespace: op.namespace, name: op.name }).catch(() => undefined);
    const after = (await admin.objects.patch(body, undefined, undefined, 'helm-controller', true, k8s.PatchStrategy.ServerSideApply)) as k8s.V1Service;
    return `ok: ${before ? `had ${driverKeys(before)}` : 'created'}; has ${driverKeys(after)}`;
  }
  const live = await admin.core.readNamespacedService({ namespace: op.namespace, name: op.name });
  const annotations = { ...live.metadata?.annotations };
  if (op.shape.claim !== undefined) {
    annotations[CLAIM_ANNOTATION] = op.shape.claim;
  } else {
    delete annotations[CLAIM_ANNOTATION];
  }
  const spec: k8s.V1ServiceSpec = { ...live.spec, ...body.spec, ports: live.spec?.ports };
  if (!body.spec?.loadBalancerClass) {
    delete spec.loadBalancerClass;
  }
  const metadata = { ...live.metadata, annotations };
  delete metadata.managedFields; // unset: the apiserver keeps them
  // The resourceVersion read: a Service the driver changed meanwhile answers 409, as it would a user.
  const after = await admin.core.replaceNamespacedService({ namespace: op.namespace, name: op.name, body: { ...live, metadata, spec } });
  return `ok: had ${driverKeys(live)}; has ${driverKeys(after)}`;
}

/** `HTTP 409 AlreadyExists: <message>`, or the first line of a connection error. */
export function refusal(error: unknown): string {
  if (error instanceof k8s.ApiException) {
    const body = parseStatus(error.body);
    return `HTTP ${error.code}${body.reason ? ` ${body.reason}` : ''}${body.message ? `: ${body.message}` : ''}`;
  }
  return `error: ${String((error as Error)?.message ?? error).split('\n')[0]}`;
}

function parseStatus(body: unknown): { reason?: string; message?: string } {
  try {
    const status = (typeof body === 'string' ? JSON.parse(body) : body) as { reason?: string; message?: string } | null;
    return { reason: status?.reason, message: status?.message?.slice(0, 200) };
  } catch {
    return { message: String(body).slice(0, 200) };
  }
}

/**
 * How a class is announced. No BGPPeer exists in the world: MetalLB takes a BGPAdvertisement
 * without peers and announces to nobody, which the ledger does not see.
 */
export function announce(platform: Platform, className: string, by: 'L2' | 'BGP'): Promise<void> {
  return setAdvertisement(platform.admin, className, by === 'BGP' ? { type: 'BGP' } : undefined);
}
