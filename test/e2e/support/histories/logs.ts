/**
 * Keeps a failed history's process logs: the platform's folder is deleted
 * when it stops, and a violation is diagnosed from the controllers' logs.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../../support/synth.js';
import type { Platform } from '../platform.js';

/** Copies every log of the platform (controllers, MetalLB, etcd, apiserver) to .cache/e2e/histories/<label>-<time>/; returns that folder. */
export function keepLogs(platform: Platform, label: string): string {
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
  return dest;
}
