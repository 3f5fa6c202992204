/**
 * The lab's external client: runs inside the client namespace (whose only
 * link is the lab's public segment, and which has no default route) and
 * sends HTTP requests on the test's behalf, one new connection per request.
 * It sends only to hosts the harness has allowed after checking their route,
 * only inside the documentation ranges, and never more requests or for longer
 * than LIMITS, whatever it is asked.
 *
 *   client-agent.ts        (commands on stdin, replies on stdout, JSON lines)
 */
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { assertDocumentation } from '../safety.js';
import { LIMITS, type Answer, type Command, type Reply, type StreamResult, type UntilResult } from './client-protocol.js';

const allowed = new Set<string>();

/** The agent's event-loop stalls (more than STALL_MS late on a 20 ms tick), kept for the last few minutes. */
const STALL_MS = 200;
const stalls: [number, number][] = [];
let tick = Date.now();
setInterval(() => {
  const now = Date.now();
  const late = now - tick - 20;
  tick = now;
  if (late > STALL_MS) {
    stalls.push([now - late, late]);
    while (stalls.length > 1_000) {
      stalls.shift();
    }
  }
}, 20).unref();
const streams = new Map<number, { stop: () => void }>();

function reply(r: Reply): void {
  process.stdout.write(JSON.stringify(r) + '\n');
}

/** The target's host, if the harness allowed it; throws otherwise. */
function checkedUrl(url: string): URL {
  const u = new URL(url);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (u.protocol !== 'http:' || !allowed.has(host)) {
    throw new Error(`client: ${url} is not an allowed target (allowed: ${[...allowed].join(', ') || 'none'})`);
  }
  return u;
}

function bounded(name: string, value: number, low: number, high: number): number {
  if (!(value >= low && value <= high)) {
    throw new Error(`client: ${name} ${value} is outside ${low}..${high}`);
  }
  return value;
}

/**
 * Source ports, handed out in turn and never reused within a run (until 41,000 connections).
 * The kernel's own choice cycles through its range in a few minutes at the rates the lab sends,
 * and a reused 4-tuple can meet a node's conntrack entry from an earlier connection to the same
 * address: one made before kube-proxy had programmed it keeps that connection un-NATed
 * (docs/datapath.md), which would be counted against whatever fault the stream is measuring.
 */
const PORTS = { first: 20_000, last: 60_999 } as const;
let nextPort: number = PORTS.first;
function freshPort(): number {
  const port = nextPort;
  nextPort = nextPort >= PORTS.last ? PORTS.first : nextPort + 1;
  return port;
}

function get(url: URL, timeoutMs: number, localPort: number = freshPort()): Promise<Answer> {
  const sentAt = Date.now();
  return new Promise((resolve) => {
    let settled = false;
    const done = (a: Answer) => {
      if (!settled) {
        settled = true;
        resolve(a);
      }
    };
    // Which side of the handshake a timeout fell on: no connection (SYN or SYN-ACK lost or late:
    // the network path) or connected without an answer (the workload or the way back).
    let connected = false;
    const req = request(url, { agent: false, localPort, headers: { connection: 'close' }, signal: AbortSignal.timeout(timeoutMs) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        try {
          const parsed = JSON.parse(body) as { workload?: unknown; peer?: unknown };
          done({ ok: true, workload: String(parsed.workload), peer: String(parsed.peer).replace(/^::ffff:/, ''), sentAt, doneAt: Date.now(), localPort });
        } catch {
          done({ ok: false, error: `HTTP ${res.statusCode}: not a workload's answer`, sentAt, doneAt: Date.now(), localPort });
        }
      });
      res.on('error', (e) => done({ ok: false, error: errorName(e), sentAt, doneAt: Date.now(), localPort }));
    });
    req.on('socket', (socket) => socket.once('connect', () => (connected = true)));
    req.on('error', (e) => {
      const name = errorName(e);
      done({ ok: false, error: name === 'timeout' ? (connected ? 'timeout (connected, no answer)' : 'timeout (connecting)') : name, sentAt, doneAt: Date.now(), localPort });
    });
    req.end();
  });
}

function errorName(e: Error & { code?: string }): string {
  return e.name === 'TimeoutError' || e.name === 'AbortError' ? 'timeout' : (e.code ?? e.message);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends `count` requests at a fixed cadence, at most LIMITS.maxInFlight at once; each outcome goes to `on`. */
async function cadence(url: URL, count: number, everyMs: number, timeoutMs: number, durationMs: number, on: (a: Answer) => void, stopped: () => boolean): Promise<number> {
  const start = Date.now();
  const inFlight = new Set<Promise<void>>();
  let sent = 0;
  while (sent < count && !stopped() && Date.now() - start < durationMs) {
    const due = start + sent * everyMs;
    if (due > Date.now()) {
      await sleep(due - Date.now());
      continue;
    }
    if (inFlight.size >= LIMITS.maxInFlight) {
      await Promise.race(inFlight);
      continue;
    }
    const p: Promise<void> = get(url, timeoutMs).then((a) => {
      inFlight.delete(p);
      on(a);
    });
    inFlight.add(p);
    sent++;
  }
  await Promise.all(inFlight);
  return sent;
}

const count = (m: Record<string, number>, k: string) => (m[k] = (m[k] ?? 0) + 1);

async function until(c: Extract<Command, { op: 'until' }>): Promise<UntilResult> {
  const url = checkedUrl(c.url);
  const every = bounded('cadenceMs', c.cadenceMs, LIMITS.minCadenceMs, 10_000);
  const timeout = bounded('timeoutMs', c.timeoutMs, 1, LIMITS.maxTimeoutMs);
  const deadline = bounded('deadlineMs', c.deadlineMs, 1, LIMITS.maxDurationMs);
  const answers: Record<string, number> = {};
  const errors: Record<string, number> = {};
  const failedPorts: number[] = [];
  let at: number | undefined;
  const attempts = await cadence(
    url,
    Math.min(LIMITS.maxRequests, Math.ceil(deadline / every)),
    every,
    timeout,
    deadline,
    (a) => {
      if (a.ok) {
        count(answers, a.workload);
        if (a.workload === c.expect && (at === undefined || a.doneAt < at)) {
          at = a.doneAt;
        }
      } else {
        count(errors, a.error);
        failedPorts.push(a.localPort);
      }
    },
    () => at !== undefined,
  );
  return { ok: at !== undefined, at, failedPorts, attempts, answers, errors };
}

async function stream(c: Extract<Command, { op: 'stream' }>): Promise<StreamResult> {
  const url = checkedUrl(c.url);
  const every = bounded('intervalMs', c.intervalMs, LIMITS.minCadenceMs, 10_000);
  const n = bounded('count', c.count, 1, LIMITS.maxRequests);
  const timeout = bounded('timeoutMs', c.timeoutMs, 1, LIMITS.maxTimeoutMs);
  bounded('duration (count × intervalMs)', n * every, 1, LIMITS.maxDurationMs);
  let stop = false;
  streams.set(c.id, { stop: () => (stop = true) });
  const answers: Record<string, number> = {};
  const errors: Record<string, number> = {};
  const via: Record<string, number> = {};
  const good: number[] = [];
  let failed = 0;
  const failures: { sentAt: number; what: string }[] = [];
  let lastAnswerAt: number | undefined;
  const startedAt = Date.now();
  const sent = await cadence(
    url,
    n,
    every,
    timeout,
    LIMITS.maxDurationMs,
    (a) => {
      if (a.ok) {
        count(answers, a.workload);
        lastAnswerAt = Math.max(lastAnswerAt ?? 0, a.doneAt);
      } else {
        count(errors, a.error);
      }
      if (a.ok && a.workload === c.expect) {
        count(via, a.peer);
        good.push(a.sentAt);
      } else {
        failed++;
        if (failures.length < 100) {
          failures.push({ sentAt: a.sentAt, what: a.ok ? `answered by ${a.workload}` : a.error });
        }
      }
    },
    () => stop,
  );
  streams.delete(c.id);
  const endedAt = Date.now();
  // Send times with a good answer, bracketed by the stream's start and its last send.
  const lastSend = startedAt + Math.max(0, sent - 1) * every;
  const marks = [startedAt, ...good.sort((a, b) => a - b), Math.max(lastSend, good.at(-1) ?? startedAt)];
  let longestGapMs = 0;
  for (let i = 1; i < marks.length; i++) {
    longestGapMs = Math.max(longestGapMs, marks[i]! - marks[i - 1]!);
  }
  failures.sort((a, b) => a.sentAt - b.sentAt);
  const during = stalls.filter(([at, late]) => at + late >= startedAt && at <= endedAt);
  return { sent, answered: good.length, failed, failures, answers, errors, via, longestGapMs, stalls: during, lastAnswerAt, startedAt, endedAt };
}

async function handle(c: Command): Promise<void> {
  try {
    switch (c.op) {
      case 'allow':
        assertDocumentation(c.host);
        allowed.add(c.host);
        reply({ id: c.id, allowed: c.host });
        return;
      case 'probe':
        reply({
          id: c.id,
          answer: await get(checkedUrl(c.url), bounded('timeoutMs', c.timeoutMs, 1, LIMITS.maxTimeoutMs), c.localPort === undefined ? undefined : bounded('localPort', c.localPort, PORTS.first, PORTS.last)),
        });
        return;
      case 'until':
        reply({ id: c.id, until: await until(c) });
        return;
      case 'stream':
        reply({ id: c.id, stream: await stream(c) });
        return;
      case 'stop':
        streams.get(c.stream)?.stop();
        reply({ id: c.id, stopped: c.stream });
        return;
    }
  } catch (error) {
    reply({ id: c.id, error: (error as Error).message });
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim()) {
    void handle(JSON.parse(line) as Command);
  }
});
// The test closing stdin ends the client.
process.stdin.on('end', () => process.exit(0));
process.stdout.write(JSON.stringify({ id: 0, allowed: '' }) + '\n');
