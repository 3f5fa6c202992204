/**
 * Processes inside a lab namespace. Each runs under `setpriv --pdeathsig KILL`,
 * so it dies with the test process even when that is killed outright; the
 * next run's leftover sweep (netns.ts) covers anything else.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { start, type Started } from '../processes.js';

const wrap = (ns: string, command: string, args: readonly string[]) => ['netns', 'exec', ns, 'setpriv', '--pdeathsig', 'KILL', '--', command, ...args];

/** Starts `command` inside namespace `ns`, logged to `<logDir>/<name>.log`. */
export function startIn(ns: string, name: string, command: string, args: readonly string[], logDir: string, env: NodeJS.ProcessEnv = process.env): Started {
  return start(name, 'ip', wrap(ns, command, args), logDir, env);
}

/** A TypeScript agent of the lab (agents/*.ts) run by node through tsx, as the controllers are. */
export function agentArgs(file: string, args: readonly string[]): string[] {
  return ['--import', 'tsx', file, ...args];
}

/** Like startIn, with stdin kept open for a conversation; stderr goes to the log, stdout to the caller. */
export function spawnInteractive(ns: string, name: string, command: string, args: readonly string[], logDir: string): ChildProcess {
  const log = createWriteStream(join(logDir, `${name}.log`));
  const child = spawn('ip', wrap(ns, command, args), { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderr?.pipe(log, { end: false });
  child.on('close', () => log.end());
  return child;
}

/** SIGKILL, then wait for the exit (a lab process keeps no state worth a graceful stop). */
export async function kill9(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) {
    return;
  }
  const exited = new Promise<void>((r) => p.once('exit', () => r()));
  p.kill('SIGKILL');
  await exited;
}
