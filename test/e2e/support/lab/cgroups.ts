/**
 * The cgroups of a lab node's Pods: one tree per hierarchy under a name that
 * starts with the lab run's prefix, so a stop, or the next run's sweep after a
 * killed run, can kill what is inside and remove them.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const CGROUP_ROOT = '/sys/fs/cgroup';

/**
 * Makes the cgroup in every hierarchy (kubelet refuses a cgroup root that does not exist); a new
 * cpuset cgroup gets its parent's CPUs and memory nodes, as nothing can join an empty one.
 */
export function createCgroups(name: string): void {
  for (const root of hierarchies()) {
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    for (const file of ['cpuset.cpus', 'cpuset.mems']) {
      if (existsSync(join(root, file)) && readFileSync(join(dir, file), 'utf8').trim() === '') {
        writeFileSync(join(dir, file), readFileSync(join(root, file), 'utf8'));
      }
    }
  }
}

/** Names of cgroups directly under any hierarchy's root that start with `prefix`. */
export function cgroupNames(prefix: string): string[] {
  const names = new Set<string>();
  for (const root of hierarchies()) {
    for (const entry of readdirSync(root, { withFileTypes: true })) {
      if (entry.isDirectory() && entry.name.startsWith(prefix)) {
        names.add(entry.name);
      }
    }
  }
  return [...names];
}

function hierarchies(): string[] {
  if (!existsSync(CGROUP_ROOT)) {
    return [];
  }
  return existsSync(join(CGROUP_ROOT, 'cgroup.controllers')) ? [CGROUP_ROOT] : readdirSync(CGROUP_ROOT).map((h) => join(CGROUP_ROOT, h)).filter((h) => existsSync(join(h, 'cgroup.procs')));
}

/** Every hierarchy's folder of a cgroup name (cgroup v1: one per controller; v2: one). */
function cgroupDirs(name: string): string[] {
  return hierarchies().map((r) => join(r, name)).filter((d) => existsSync(d));
}

/** Folders under `dir`, deepest first. */
function subtree(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      out.push(...subtree(join(dir, entry.name)));
    }
  }
  out.push(dir);
  return out;
}

/** SIGKILL to every process in a cgroup tree (the Pods' containers). */
export function killCgroups(name: string): void {
  for (const root of cgroupDirs(name)) {
    for (const dir of subtree(root)) {
      let pids: number[] = [];
      try {
        pids = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').map(Number).filter((n) => n > 0);
      } catch {
        // removed meanwhile
      }
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
    }
  }
}

/** One pass: kills what is inside, removes the folders that are empty; returns how many are left. */
export function sweepCgroups(name: string): number {
  killCgroups(name);
  let left = 0;
  for (const root of cgroupDirs(name)) {
    for (const dir of subtree(root)) {
      try {
        rmdirSync(dir);
      } catch {
        left++;
      }
    }
  }
  return left;
}

/** Removes a cgroup tree once its processes are gone (retrying while the kernel reaps them). */
export async function removeCgroups(name: string): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    if (sweepCgroups(name) === 0) {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`lab: cgroups ${name} still busy: ${cgroupDirs(name).join(', ')}`);
}
