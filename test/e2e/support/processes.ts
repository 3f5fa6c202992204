/** Child processes of a suite: started on loopback, logged to files, always stopped. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Started {
  readonly name: string;
  readonly process: ChildProcess;
  readonly logFile: string;
  /** The last lines of the process's log, for failure messages. */
  tail(lines?: number): string;
  stop(): Promise<void>;
}

export function start(name: string, command: string, args: string[], logDir: string, env: NodeJS.ProcessEnv = process.env): Started {
  const logFile = join(logDir, `${name}.log`);
  const log = createWriteStream(logFile);
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: false });
  // Two sources, one file: neither may end it (pipe() would on its source's end, and the
  // other could still write); 'close' below does, once both have drained.
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  child.on('error', (error) => log.write(`spawn error: ${error.message}\n`));
  // 'close' fires after the output streams drain, so the log never sees a write after end.
  child.on('close', () => log.end());
  return {
    name,
    process: child,
    logFile,
    tail(lines = 30) {
      try {
        return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
      } catch {
        return '';
      }
    },
    stop() {
      return new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) {
          resolve();
          return;
        }
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      });
    },
  };
}
