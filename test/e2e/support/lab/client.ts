/** The test's side of the client agent: commands out, replies matched by id. */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Answer, Command, Reply, StreamResult, UntilResult } from './agents/client-protocol.js';

type Pending = { resolve: (r: Reply) => void; reject: (e: Error) => void };
/** A command without its id (distributive, so each variant keeps its own fields). */
type Request<C = Command> = C extends Command ? Omit<C, 'id'> : never;

export class LabClient {
  private next = 1;
  private readonly pending = new Map<number, Pending>();
  readonly ready: Promise<void>;

  constructor(private readonly child: ChildProcess) {
    let markReady!: () => void;
    this.ready = new Promise((r) => (markReady = r));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const reply = JSON.parse(line) as Reply;
      if (reply.id === 0) {
        markReady();
        return;
      }
      const p = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (p && 'error' in reply) {
        p.reject(new Error(reply.error));
      } else {
        p?.resolve(reply);
      }
    });
    child.on('exit', (code, signal) => {
      for (const p of this.pending.values()) {
        p.reject(new Error(`the client agent exited (${code ?? signal})`));
      }
      this.pending.clear();
    });
  }

  private send(command: Request): { id: number; reply: Promise<Reply> } {
    const id = this.next++;
    const reply = new Promise<Reply>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.child.stdin!.write(JSON.stringify({ ...command, id }) + '\n');
    return { id, reply };
  }

  async allow(host: string): Promise<void> {
    await this.send({ op: 'allow', host }).reply;
  }

  /** One request; from `localPort` when given (the same 4-tuple as an earlier request's). */
  async probe(url: string, timeoutMs = 1_000, localPort?: number): Promise<Answer> {
    return ((await this.send({ op: 'probe', url, timeoutMs, localPort }).reply) as { answer: Answer }).answer;
  }

  /** Requests every cadenceMs until `expect` answers or the deadline: when it first answered. */
  async until(url: string, expect: string, options: { cadenceMs?: number; timeoutMs?: number; deadlineMs?: number } = {}): Promise<UntilResult> {
    const { cadenceMs = 20, timeoutMs = 1_000, deadlineMs = 60_000 } = options;
    return ((await this.send({ op: 'until', url, expect, cadenceMs, timeoutMs, deadlineMs }).reply) as { until: UntilResult }).until;
  }

  /** Starts a stream; `result` settles when it has sent `count` requests or is stopped. */
  stream(url: string, expect: string, options: { intervalMs?: number; count: number; timeoutMs?: number }): { result: Promise<StreamResult>; stop: () => Promise<StreamResult> } {
    const { intervalMs = 50, count, timeoutMs = 500 } = options;
    const { id, reply } = this.send({ op: 'stream', url, expect, intervalMs, count, timeoutMs });
    const result = reply.then((r) => (r as { stream: StreamResult }).stream);
    return {
      result,
      stop: async () => {
        await this.send({ op: 'stop', stream: id }).reply;
        return result;
      },
    };
  }

  /** Ends the agent (it exits when its stdin closes). */
  close(): void {
    this.child.stdin?.end();
  }
}
