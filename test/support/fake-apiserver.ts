/**
 * A tiny HTTP stand-in for the few apiserver endpoints the controller runtime
 * speaks, for unit tests of the informer, leader election and events (the e2e
 * runs them against a real kube-apiserver). Objects are kept per path and
 * written under the apiserver's rules (object-store.ts: a fresh resourceVersion
 * on every write, 409 Conflict on a stale one, 409 AlreadyExists on a create of
 * an existing name). Watches are scripted by the test: each watch request takes
 * the next script and streams its events.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { apiError, ObjectRules } from './object-store.js';

export interface WatchRequest {
  readonly path: string;
  readonly resourceVersion: string | undefined;
}

export type WatchScript = (send: (type: string, object: unknown) => void, end: () => void) => void;

const STALL: WatchScript = () => {};

type StoredObject = { metadata: { name: string; namespace?: string; resourceVersion?: string } } & Record<string, unknown>;

/** A KubeConfig for a test's HTTP server listening on loopback, with a bearer token. */
export function loopbackKubeConfig(server: Server, token = 'fake'): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'fake', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'fake', token }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'fake' }],
    currentContext: 'fake',
  });
  return kc;
}

export class FakeApiserver {
  readonly objects = new Map<string, StoredObject>();
  readonly watches: WatchRequest[] = [];
  readonly requests: { method: string; path: string }[] = [];
  private readonly scripts: WatchScript[] = [];
  private readonly rules = new ObjectRules(100);
  private server!: Server;
  private readonly open = new Set<ServerResponse>();
  /** TCP connections accepted: what a keep-alive client saves. */
  connections = 0;
  private writesHeld: Promise<void> | undefined;

  static async start(): Promise<FakeApiserver> {
    const fake = new FakeApiserver();
    fake.server = createServer((req, res) => void fake.handle(req, res));
    fake.server.on('connection', () => fake.connections++);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** A KubeConfig for this server (plain HTTP on loopback). */
  kubeConfig(): k8s.KubeConfig {
    return loopbackKubeConfig(this.server);
  }

  /** The next watch request plays this script. */
  onWatch(script: WatchScript): void {
    this.scripts.push(script);
  }

  /** The next watch request gets no answer at all, not even headers (an apiserver that hangs). */
  stallNextWatch(): void {
    this.scripts.push(STALL);
  }

  /**
   * Holds every write from now on until the returned function is called; held
   * writes are then applied in the order they arrived (a slow apiserver, to
   * make a race between two writers deterministic).
   */
  holdWrites(): () => void {
    let resume!: () => void;
    this.writesHeld = new Promise((resolve) => (resume = resolve));
    return () => {
      this.writesHeld = undefined;
      resume();
    };
  }

  nextRevision(): string {
    return this.rules.nextRevision();
  }

  async stop(): Promise<void> {
    for (const res of this.open) res.destroy();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections(); // keep-alive sockets would hold close() open
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    this.requests.push({ method: req.method ?? 'GET', path: url.pathname });
    if (url.searchParams.get('watch') === 'true') {
      this.watches.push({ path: url.pathname, resourceVersion: url.searchParams.get('resourceVersion') ?? undefined });
      const script = this.scripts.shift();
      this.open.add(res);
      if (script === STALL) {
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders(); // the apiserver answers a watch at once, events or not
      this.open.add(res);
      res.on('close', () => this.open.delete(res));
      if (!script) {
        return; // an idle watch, until the client aborts
      }
      script(
        (type, object) => res.write(`${JSON.stringify({ type, object })}\n`),
        () => res.end(),
      );
      return;
    }
    const body = await new Promise<string>((resolve) => {
      let text = '';
      req.on('data', (chunk) => (text += chunk));
      req.on('end', () => resolve(text));
    });
    const reply = (status: number, object: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(object));
    };
    const path = url.pathname;
    if (req.method !== 'GET' && this.writesHeld) {
      await this.writesHeld;
    }
    try {
      if (req.method === 'GET') {
        const object = this.objects.get(path);
        if (!object) {
          throw apiError(404, 'NotFound', `${path} not found`);
        }
        return reply(200, object);
      }
      if (req.method === 'POST') {
        const object = JSON.parse(body) as StoredObject;
        return reply(201, this.rules.create(this.objects, `${path}/${object.metadata.name}`, object, path));
      }
      if (req.method === 'PUT') {
        return reply(200, this.rules.update(this.objects, path, JSON.parse(body) as StoredObject, path, 'main'));
      }
      throw apiError(405, 'MethodNotAllowed', `${req.method} ${path}`);
    } catch (error) {
      // A refusal goes back as the apiserver's Status.
      if (error instanceof k8s.ApiException) {
        return reply(error.code, JSON.parse(error.body as string));
      }
      throw error;
    }
  }
}
