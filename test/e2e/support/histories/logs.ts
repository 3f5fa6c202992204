/**
 * Keeps what a failed history leaves for diagnosis: the processes' logs (the
 * platform's folder is deleted when it stops), the Events (the controllers
 * say there why they wait) and the objects of the ledger as they stand.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../../support/synth.js';
import { crd, type Platform } from '../platform.js';

/** Writes all of it to .cache/e2e/histories/<label>-<time>/ and returns that folder. */
export async function keepLogs(platform: Platform, label: string): Promise<string> {
  const dest = join(REPO_ROOT, '.cache', 'e2e', 'histories', `${label}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(dest, { recursive: true });
  // The controllers log beside the cluster's folder of logs, the control plane inside it.
  for (const dir of [platform.cluster.dir, join(platform.cluster.dir, 'logs')]) {
    if (existsSync(dir)) {
      for (const file of readdirSync(dir).filter((f) => f.endsWith('.log'))) {
        copyFileSync(join(dir, file), join(dest, file));
      }
    }
  }
  try {
    const { admin } = platform;
    const events = (await admin.core.listEventForAllNamespaces()).items
      .map((e) => {
        const at = new Date(e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp ?? 0).toISOString();
        const o = e.involvedObject;
        return `${at} ${e.type} ${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name} (uid ${o.uid?.slice(0, 8)}) ${e.reason}: ${e.message} (x${e.count ?? 1})`;
      })
      .sort();
    writeFileSync(join(dest, 'events.txt'), `${events.join('\n')}\n`);
    const objects = {
      claims: await admin.custom.listClusterCustomObject(crd('ipaddressclaims')),
      addresses: await admin.custom.listClusterCustomObject(crd('ipaddresses')),
      services: (await admin.core.listServiceForAllNamespaces()).items,
    };
    writeFileSync(join(dest, 'objects.json'), JSON.stringify(objects, null, 1));
  } catch (error) {
    writeFileSync(join(dest, 'events.txt'), `could not read the cluster: ${(error as Error).message}\n`);
  }
  return dest;
}
