/**
 * Network namespaces of the data-path lab: created under one run's name, found
 * again by their prefix, and removed with every process inside them. A run
 * writes its owner (pid and start time) before creating anything, so the next
 * run can tell a leftover of a killed run from a lab that is still running
 * beside it.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cgroupNames, sweepCgroups } from './cgroups.js';

/** Every namespace the lab makes starts with this, then the run's id. */
export const LAB_PREFIX = 'cozylab-';
/** Where runs keep their owner file, sockets, kubeconfigs and logs. */
export const LAB_STATE = join(tmpdir(), 'cozylab');

/** Runs `ip` with the arguments; throws with its stderr. */
export function ip(args: readonly string[]): string {
  try {
    return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    throw new Error(`ip ${args.join(' ')}: ${stderr || (error as Error).message}`);
  }
}

/** Runs a command inside a namespace, for the few settings `ip` has no verb for (per-namespace sysctls). */
export function inNetns(ns: string, command: string, args: readonly string[]): string {
  try {
    return execFileSync('ip', ['netns', 'exec', ns, command, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    throw new Error(`in ${ns}: ${command} ${args.join(' ')}: ${stderr || (error as Error).message}`);
  }
}

/** Sets a sysctl under /proc/sys/net of one namespace (only that namespace sees it). */
export function netSysctl(ns: string, key: string, value: string): void {
  if (!/^net\/[A-Za-z0-9_/.-]+$/.test(key)) {
    throw new Error(`lab: ${key} is not a per-namespace net sysctl`);
  }
  inNetns(ns, 'sh', ['-c', `echo ${value} > /proc/sys/${key}`]);
}

export function listNamespaces(): string[] {
  return ip(['netns', 'list'])
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter(Boolean);
}

interface Owner {
  readonly pid: number;
  readonly started: string;
}

/** A process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat): a pid plus this names one process. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function ownerAlive(runId: string): boolean {
  try {
    const owner = JSON.parse(readFileSync(join(LAB_STATE, runId, 'owner.json'), 'utf8')) as Owner;
    return startTime(owner.pid) === owner.started;
  } catch {
    return false;
  }
}

/** A new run: its id, its state folder, and its owner written before anything else exists. */
export function newRun(): { runId: string; dir: string } {
  const runId = randomBytes(4).toString('hex');
  const dir = join(LAB_STATE, runId);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'owner.json'), JSON.stringify({ pid: process.pid, started: startTime(process.pid) ?? '' } satisfies Owner));
  return { runId, dir };
}

/** How often a namespace is tried again while a process in it is still dying (a SIGKILLed shim, a container's process). */
const REMOVE_ATTEMPTS = 20;
const REMOVE_PAUSE_MS = 250;

/**
 * Kills every process inside a namespace (by pid), then deletes it; tried
 * again, killing what is in it anew, while it is still listed: a process
 * being reaped (a container shim's child) can outlive the first round.
 * Throws only when the namespace is still there after every attempt.
 */
export function removeNamespace(ns: string): void {
  for (let attempt = 1; ; attempt++) {
    let pids: number[] = [];
    try {
      pids = ip(['netns', 'pids', ns]).split('\n').map(Number).filter((n) => n > 0);
    } catch {
      // gone already
    }
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // exited meanwhile
      }
    }
    try {
      ip(['netns', 'del', ns]);
    } catch (error) {
      if (listNamespaces().includes(ns)) {
        if (attempt >= REMOVE_ATTEMPTS) {
          throw error;
        }
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, REMOVE_PAUSE_MS); // synchronous: also used at process exit
        continue;
      }
    }
    if (!listNamespaces().includes(ns) || attempt >= REMOVE_ATTEMPTS) {
      return;
    }
  }
}

/** Removes the namespaces and state of runs whose owner is gone (a killed run); returns the namespaces removed. */
export function cleanLeftovers(): string[] {
  const removed: string[] = [];
  for (const ns of listNamespaces().filter((n) => n.startsWith(LAB_PREFIX))) {
    const runId = ns.slice(LAB_PREFIX.length).split('-')[0] ?? '';
    if (!ownerAlive(runId)) {
      removeNamespace(ns);
      removed.push(ns);
    }
  }
  // A killed node suite's containers live on in their cgroups (outside any lab namespace).
  for (const cgroup of cgroupNames(LAB_PREFIX)) {
    const runId = cgroup.slice(LAB_PREFIX.length).split('-')[0] ?? '';
    if (!ownerAlive(runId)) {
      sweepCgroups(cgroup);
    }
  }
  if (existsSync(LAB_STATE)) {
    for (const runId of readdirSync(LAB_STATE)) {
      if (!ownerAlive(runId)) {
        rmSync(join(LAB_STATE, runId), { recursive: true, force: true });
      }
    }
  }
  return removed;
}

/** Why this machine cannot run the lab, or undefined when it can (root, ip, nft, setpriv, and a namespace made and removed). */
export function labUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) {
    return 'the data-path lab needs root (network namespaces)';
  }
  for (const [tool, args] of [['ip', ['-V']], ['nft', ['--version']], ['setpriv', ['--version']]] as const) {
    try {
      execFileSync(tool, args, { stdio: 'ignore' });
    } catch {
      return `the data-path lab needs ${tool} (${tool === 'nft' ? 'Debian package nftables' : tool === 'ip' ? 'Debian package iproute2' : 'util-linux'})`;
    }
  }
  const probe = `${LAB_PREFIX}probe${process.pid}`;
  try {
    ip(['netns', 'add', probe]);
    ip(['-n', probe, 'link', 'add', 'p0', 'type', 'veth', 'peer', 'name', 'p1']);
    ip(['-n', probe, 'link', 'add', 'b0', 'type', 'bridge']);
  } catch (error) {
    return `this machine cannot make network namespaces, veths and bridges: ${(error as Error).message}`;
  } finally {
    try {
      ip(['netns', 'del', probe]);
    } catch {
      // never made
    }
  }
  return undefined;
}
