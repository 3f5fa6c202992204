/** What the test asks of the client agent, and what it answers (JSON lines over its stdin and stdout). */

/** Hard limits the agent enforces whatever it is asked: every request loop is bounded in count and time. */
export const LIMITS = { maxRequests: 5_000, maxDurationMs: 180_000, minCadenceMs: 5, maxTimeoutMs: 5_000, maxInFlight: 64 } as const;

export type Command =
  /** The harness checked the route to this host goes over the lab's own link: only now may requests go to it. */
  | { readonly id: number; readonly op: 'allow'; readonly host: string }
  /** One request, from `localPort` when given (to reuse a connection's exact 4-tuple on purpose). */
  | { readonly id: number; readonly op: 'probe'; readonly url: string; readonly timeoutMs: number; readonly localPort?: number }
  /** A request every cadenceMs (overlapping) until one is answered by `expect`, or the deadline. */
  | { readonly id: number; readonly op: 'until'; readonly url: string; readonly expect: string; readonly cadenceMs: number; readonly timeoutMs: number; readonly deadlineMs: number }
  /** `count` requests, one every intervalMs (overlapping), then a summary; a `stop` ends it early. */
  | { readonly id: number; readonly op: 'stream'; readonly url: string; readonly expect: string; readonly intervalMs: number; readonly count: number; readonly timeoutMs: number }
  | { readonly id: number; readonly op: 'stop'; readonly stream: number };

/** One request's outcome: who answered (and through which node's address), or why nothing did. */
export type Answer =
  | { readonly ok: true; readonly workload: string; readonly peer: string; readonly sentAt: number; readonly doneAt: number; readonly localPort: number }
  | { readonly ok: false; readonly error: string; readonly sentAt: number; readonly doneAt: number; readonly localPort: number };

export interface UntilResult {
  readonly ok: boolean;
  /** The source ports of the attempts that got no answer from anyone. */
  readonly failedPorts: readonly number[];
  /** Epoch ms at which the first answer from `expect` arrived. */
  readonly at?: number;
  readonly attempts: number;
  /** Answers by workload, `expect` included. */
  readonly answers: Record<string, number>;
  readonly errors: Record<string, number>;
}

export interface StreamResult {
  readonly sent: number;
  /** Answered by `expect`. */
  readonly answered: number;
  /** Not answered by `expect`: no answer, or another workload's. */
  readonly failed: number;
  readonly answers: Record<string, number>;
  readonly errors: Record<string, number>;
  /** Answers from `expect` by the node address it saw (which node carried them). */
  readonly via: Record<string, number>;
  /** The longest span of send times with no request answered by `expect` (from the stream's start to its end). */
  readonly longestGapMs: number;
  /** The first failures (at most 100): when each request was sent and what came back instead of `expect`. */
  readonly failures: readonly { readonly sentAt: number; readonly what: string }[];
  /**
   * The client's own stalls during the stream (its event loop late by more than 200 ms: the
   * machine starved it), as [epoch ms, ms late]. A request whose timeout fell in a stall may have
   * been answered in time by the network and the workload.
   */
  readonly stalls: readonly (readonly [number, number])[];
  /** When the last answer from anyone arrived (epoch ms), if one did. */
  readonly lastAnswerAt?: number;
  readonly startedAt: number;
  readonly endedAt: number;
}

export type Reply =
  | { readonly id: number; readonly error: string }
  | { readonly id: number; readonly allowed: string }
  | { readonly id: number; readonly answer: Answer }
  | { readonly id: number; readonly until: UntilResult }
  | { readonly id: number; readonly stream: StreamResult }
  | { readonly id: number; readonly stopped: number };
