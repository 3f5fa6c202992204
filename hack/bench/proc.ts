/** A process's CPU time and peak memory, from /proc (Linux). */
import { readFileSync } from 'node:fs';

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
