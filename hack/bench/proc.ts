/** A process's CPU time and peak memory, from /proc (Linux). */
import { readdirSync, readFileSync } from 'node:fs';

/** utime + stime of the process, in seconds. */
export function cpuSeconds(pid: number): number {
  // Fields after the command name, which is in parentheses and may hold spaces.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticksPerSecond = 100; // USER_HZ on every Linux this runs on
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/** Peak resident set (VmHWM) in MiB. */
export function peakRssMiB(pid: number): number {
  const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return kb / 1024;
}

/** Resident set now (VmRSS) in MiB. */
export function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return kb / 1024;
}

/**
 * Processes whose command line mentions `dir` and whose program is one of
 * `programs` (by the last path element of argv[0]): the control plane a bench
 * started under its own temp folder, which the harness does not hand out pids of.
 */
export function pidsUnder(dir: string, programs: readonly string[]): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile
    }
    const program = argv[0]?.split('/').at(-1) ?? '';
    if (programs.includes(program) && argv.some((arg) => arg.includes(dir))) {
      pids.push(Number(entry));
    }
  }
  return pids;
}
