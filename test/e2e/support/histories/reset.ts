/**
 * Between histories: delete every Service, claim and address the history
 * made, and the classes an admin made by mistake, the way a user would, and
 * wait for the controllers to take it all down. What does not go away in time is a leak and is reported; it is then
 * removed by force (finalizers stripped) so the next history starts clean.
 */
import * as k8s from '@kubernetes/client-node';
import { crd, PLACEHOLDERS, type Cr, type Platform } from '../platform.js';
import { GROUP, VERSION } from '../kube.js';
import { ADMIN_NAMESPACE, CLASSES, TENANTS } from './world.js';
import { seconds, sleep } from './time.js';
import { announce } from './apply.js';

const USER_NAMESPACES = [...TENANTS, ADMIN_NAMESPACE];

async function leftovers(platform: Platform): Promise<{ services: string[]; claims: Cr[]; addresses: Cr[]; placeholders: string[]; classes: string[] }> {
  const { admin } = platform;
  const services: string[] = [];
  for (const namespace of USER_NAMESPACES) {
    services.push(...(await admin.core.listNamespacedService({ namespace })).items.map((s) => `${namespace}/${s.metadata!.name}`));
  }
  const claims = ((await admin.custom.listClusterCustomObject(crd('ipaddressclaims'))) as { items: Cr[] }).items;
  const addresses = ((await admin.custom.listClusterCustomObject(crd('ipaddresses'))) as { items: Cr[] }).items;
  const placeholders = (await admin.core.listNamespacedService({ namespace: PLACEHOLDERS })).items.map((s) => s.metadata!.name!);
  // The world's classes stay; any other is an admin's mistake of the history.
  const world = new Set(CLASSES.map((c) => c.name));
  const classes = ((await admin.custom.listClusterCustomObject(crd('ipaddressclasses'))) as { items: Cr[] }).items.map((c) => c.metadata.name!).filter((n) => !world.has(n));
  return { services, claims, addresses, placeholders, classes };
}

const ignoreGone = (call: Promise<unknown>) => call.catch(() => undefined);

/** Deletes everything a history made; returns what had to be removed by force (empty when all went by itself). */
export async function resetWorld(platform: Platform, waitMs: number): Promise<string[]> {
  const { admin } = platform;
  // Every class of the world announced by L2 again: the next seed's generator starts from that.
  for (const c of CLASSES) {
    await announce(platform, c.name, 'L2');
  }
  let left = await leftovers(platform);
  for (const s of left.services) {
    const [namespace, name] = s.split('/') as [string, string];
    await ignoreGone(admin.core.deleteNamespacedService({ namespace, name }));
  }
  for (const c of left.claims) {
    await ignoreGone(admin.custom.deleteNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: c.metadata.namespace!, name: c.metadata.name! }));
  }
  for (const name of left.classes) {
    await ignoreGone(admin.custom.deleteClusterCustomObject({ ...crd('ipaddressclasses'), name }));
  }
  // Claims first: an address is deletable once its claim is gone (Released under Retain).
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline && (left = await leftovers(platform)).claims.length > 0) {
    await sleep(500);
  }
  for (const a of left.addresses) {
    await ignoreGone(admin.custom.deleteClusterCustomObject({ ...crd('ipaddresses'), name: a.metadata.name! }));
  }
  const empty = (l: typeof left) => l.services.length + l.claims.length + l.addresses.length + l.placeholders.length + l.classes.length === 0;
  while (Date.now() < deadline && !empty((left = await leftovers(platform)))) {
    if (left.claims.length === 0) {
      for (const a of left.addresses.filter((a) => !a.metadata.deletionTimestamp)) {
        await ignoreGone(admin.custom.deleteClusterCustomObject({ ...crd('ipaddresses'), name: a.metadata.name! }));
      }
    }
    await sleep(500);
  }
  if (empty(left)) {
    return [];
  }
  const leaks = [
    ...left.services.map((s) => `Service ${s}`),
    ...left.claims.map((c) => `IPAddressClaim ${c.metadata.namespace}/${c.metadata.name} (finalizers ${c.metadata.finalizers?.join(', ') || 'none'})`),
    ...left.addresses.map((a) => `IPAddress ${a.metadata.name} (${a.status?.phase ?? 'no phase'}, finalizers ${a.metadata.finalizers?.join(', ') || 'none'})`),
    ...left.placeholders.map((p) => `placeholder ${PLACEHOLDERS}/${p}`),
    ...left.classes.map((c) => `IPAddressClass ${c}`),
  ].map((what) => `${what} still there ${seconds(waitMs)} after the cleanup began`);
  await forceEmpty(platform, left);
  return leaks;
}

/** A merge patch dropping every finalizer: null deletes the field, which V1ObjectMeta's type has no room for. */
function withoutFinalizers(kind: 'IPAddressClaim' | 'IPAddress', name: string, namespace?: string): k8s.KubernetesObject {
  return { apiVersion: `${GROUP}/${VERSION}`, kind, metadata: { name, ...(namespace ? { namespace } : {}), finalizers: null as unknown as string[] } };
}

async function forceEmpty(platform: Platform, left: Awaited<ReturnType<typeof leftovers>>): Promise<void> {
  const { admin } = platform;
  const patch = (object: k8s.KubernetesObject) => admin.objects.patch(object, undefined, undefined, 'histories', undefined, k8s.PatchStrategy.MergePatch);
  for (const c of left.claims) {
    await ignoreGone(patch(withoutFinalizers('IPAddressClaim', c.metadata.name!, c.metadata.namespace!)));
    await ignoreGone(admin.custom.deleteNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: c.metadata.namespace!, name: c.metadata.name! }));
  }
  for (const a of left.addresses) {
    await ignoreGone(patch(withoutFinalizers('IPAddress', a.metadata.name!)));
    await ignoreGone(admin.custom.deleteClusterCustomObject({ ...crd('ipaddresses'), name: a.metadata.name! }));
  }
  for (const p of left.placeholders) {
    await ignoreGone(admin.core.deleteNamespacedService({ namespace: PLACEHOLDERS, name: p }));
  }
  for (const s of left.services) {
    const [namespace, name] = s.split('/') as [string, string];
    await ignoreGone(admin.core.deleteNamespacedService({ namespace, name }));
  }
  for (const name of left.classes) {
    await ignoreGone(admin.custom.deleteClusterCustomObject({ ...crd('ipaddressclasses'), name }));
  }
  await sleep(2_000);
}
