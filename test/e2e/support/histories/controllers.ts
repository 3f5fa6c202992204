/**
 * The core and the driver as a history runs them: one process each, killed
 * with SIGKILL and started again as a fault, and started again (and reported)
 * when one exits on its own.
 */
import type { ControllerProcess } from '../controller-process.js';
import type { Platform } from '../platform.js';
import type { Victim } from './operations.js';

export class Controllers {
  private generation = 0;
  private readonly running = new Map<Victim, ControllerProcess>();

  constructor(private readonly platform: Platform) {}

  async start(): Promise<void> {
    for (const victim of ['core', 'driver'] as const) {
      this.running.set(victim, await this.spawn(victim));
    }
  }

  /** kill -9 (as crash-steps does), then a new process; says which pids. */
  async kill(victim: Victim): Promise<string> {
    const old = this.running.get(victim)!.process;
    const child = old.process;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
    const next = await this.spawn(victim);
    this.running.set(victim, next);
    return `killed pid ${child.pid}, started ${next.process.name} (pid ${next.process.process.pid})`;
  }

  /** Controllers that exited without being killed, each with its log's tail; each is started again. */
  async reviveExited(): Promise<string[]> {
    const reports: string[] = [];
    for (const [victim, c] of this.running) {
      const child = c.process.process;
      if (child.exitCode !== null || child.signalCode !== null) {
        reports.push(`${c.process.name} exited by itself (${child.exitCode ?? child.signalCode}); its log ends:\n${c.process.tail(15)}`);
        this.running.set(victim, await this.spawn(victim));
      }
    }
    return reports;
  }

  private spawn(victim: Victim): Promise<ControllerProcess> {
    const instance = `${victim === 'core' ? 'address-controller' : 'metallb-iad'}-h${++this.generation}`;
    return victim === 'core' ? this.platform.startCore(instance) : this.platform.startDriver(instance);
  }
}
