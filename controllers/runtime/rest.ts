/**
 * Both controllers' writes on a short path: one `http(s).request` per write over the
 * process's shared keep-alive agent (connections.ts), the body
 * JSON.stringify'd and the answer JSON.parse'd, nothing else. client-node's
 * generated clients wrap every call in node-fetch, WHATWG URL parsing, header
 * objects, a middleware chain and an object serializer: at a burst of claims
 * that was about a third of the core's CPU and most of its short-lived
 * garbage (npm run bench, core), and client-node's generated clients were most
 * of the driver's resident code. Reads stay on the informers; their lists
 * come in pages (ResourceClient.list), their watches are informer.ts's.
 *
 * Same requests, same answers: the path, method and body client-node's
 * CustomObjectsApi and CoreV1Api send; a refusal is client-node's own
 * `ApiException` (code, body text), so isConflict / isNotFound / apiError
 * read it as before.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import type { KubeObject, ResourceRef } from './kube.js';

/**
 * How long the connection settings (server, credentials, agent) are reused
 * before the KubeConfig is asked again; a 401 asks again at once and retries
 * the write once, so a rotated token costs one extra round trip at most.
 */
const SETTINGS_TTL_MS = 10_000;

/** How long one request may wait for its whole answer. */
export const REQUEST_TIMEOUT_MS = 60_000;

interface Settings {
  readonly module: typeof http | typeof https;
  readonly base: http.RequestOptions;
  readonly headers: http.OutgoingHttpHeaders;
  readonly prefix: string;
  readonly at: number;
}

export class RestClient {
  private settings: Promise<Settings> | undefined;

  constructor(
    private readonly kubeConfig: k8s.KubeConfig,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Sends one JSON request; resolves with the parsed answer (undefined for an empty one). */
  async request<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
    // The JSON text is made inside send() and dropped once written: held here until the answer
    // came, every body outlived two young-generation collections and was promoted, a third of
    // the old generation's growth during a burst.
    let settings = await this.current();
    try {
      return await send<T>(settings, method, path, body);
    } catch (error) {
      if (!(error instanceof k8s.ApiException && error.code === 401)) {
        throw error;
      }
      // Credentials may have rotated since they were read: read them again and try once more.
      this.settings = undefined;
      settings = await this.current();
      return send<T>(settings, method, path, body);
    }
  }

  private current(): Promise<Settings> {
    const cached = this.settings;
    if (cached) {
      return cached.then((s) => (this.now() - s.at < SETTINGS_TTL_MS ? s : this.refresh()));
    }
    return this.refresh();
  }

  private refresh(): Promise<Settings> {
    const pending = readSettings(this.kubeConfig, this.now());
    this.settings = pending;
    pending.catch(() => {
      if (this.settings === pending) {
        this.settings = undefined;
      }
    });
    return pending;
  }
}

async function readSettings(kubeConfig: k8s.KubeConfig, at: number): Promise<Settings> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) {
    throw new Error('No currently active cluster');
  }
  const server = new URL(cluster.server);
  const options: https.RequestOptions = {};
  // Credentials, TLS material and the shared agent, exactly as client-node's own requests get them.
  await kubeConfig.applyToHTTPSOptions(options);
  const plain = server.protocol === 'http:';
  const base: https.RequestOptions = {
    protocol: server.protocol,
    hostname: server.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: server.port || (plain ? 80 : 443),
    agent: options.agent,
    auth: options.auth,
  };
  if (!plain) {
    // Only used if the agent has to make a socket without its own settings (it never does here).
    Object.assign(base, { ca: options.ca, cert: options.cert, key: options.key, pfx: options.pfx, passphrase: options.passphrase });
  }
  const headers: http.OutgoingHttpHeaders = { ...(options.headers as http.OutgoingHttpHeaders | undefined), Accept: 'application/json' };
  return { module: plain ? http : https, base, headers, prefix: server.pathname.replace(/\/$/, ''), at };
}

function send<T>(settings: Settings, method: string, path: string, body: unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: http.OutgoingHttpHeaders = { ...settings.headers };
    if (payload !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = Buffer.byteLength(payload);
    }
    const req = settings.module.request({ ...settings.base, method, path: settings.prefix + path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code >= 200 && code <= 299) {
          try {
            resolve((text ? JSON.parse(text) : undefined) as T);
          } catch (error) {
            reject(error);
          }
          return;
        }
        // As client-node's generated clients throw it: a 401 carries no body; anything else its text.
        const responseHeaders = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
        reject(
          code === 401
            ? new k8s.ApiException<undefined>(code, 'Unauthorized', undefined, responseHeaders)
            : new k8s.ApiException<string>(code, 'Unknown API Status Code!', text, responseHeaders),
        );
      });
    });
    // A write the apiserver never answers (a connection gone silent) fails instead of holding its worker forever.
    const timer = setTimeout(() => req.destroy(new Error(`${method} ${path}: no answer in ${REQUEST_TIMEOUT_MS / 1000} s`)), REQUEST_TIMEOUT_MS);
    timer.unref();
    req.on('close', () => clearTimeout(timer));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Items per page of a list: client-go's reflector asks for 500 too. */
export const LIST_PAGE_SIZE = 500;

/**
 * One resource on the short path, custom or built in (group '' is the core
 * API, /api/v1): its writes and the informer's list, asked for in pages of
 * LIST_PAGE_SIZE as client-go's reflector does, so the start-up never holds the
 * text of the whole collection at once (at 10,000 addresses, about 7 MB of JSON
 * and its copies). `namespace` narrows the list and watch to one namespace.
 */
export class ResourceClient<T extends KubeObject> {
  private readonly base: string;

  constructor(
    private readonly rest: RestClient,
    private readonly ref: ResourceRef,
    private readonly namespace?: string,
  ) {
    this.base = ref.group ? `/apis/${ref.group}/${ref.version}` : `/api/${ref.version}`;
  }

  /** The resource's plural, which names its informer in logs and metrics. */
  get plural(): string {
    return this.ref.plural;
  }

  /** The collection path informers list and watch: across namespaces, or the one it was given. */
  get path(): string {
    return this.collectionPath(this.namespace);
  }

  private collectionPath(namespace: string | undefined): string {
    return `${this.base}${namespace ? `/namespaces/${encodeURIComponent(namespace)}` : ''}/${this.ref.plural}`;
  }

  private objectPath(name: string, namespace: string | undefined): string {
    return `${this.collectionPath(namespace)}/${encodeURIComponent(name)}`;
  }

  /** Every object, page by page; the resourceVersion is the list's (every page of one list carries the same). */
  async list(pageSize = LIST_PAGE_SIZE): Promise<{ items: T[]; metadata: { resourceVersion?: string } }> {
    const items: T[] = [];
    let resourceVersion: string | undefined;
    let next: string | undefined;
    do {
      const query = `?limit=${pageSize}${next ? `&continue=${encodeURIComponent(next)}` : ''}`;
      const page = await this.rest.request<{ items?: T[]; metadata?: { resourceVersion?: string; continue?: string } }>('GET', this.path + query);
      for (const item of page.items ?? []) {
        items.push(item);
      }
      resourceVersion = page.metadata?.resourceVersion;
      next = page.metadata?.continue || undefined;
    } while (next);
    return { items, metadata: { resourceVersion } };
  }

  get(name: string, namespace?: string): Promise<T> {
    return this.rest.request<T>('GET', this.objectPath(name, namespace));
  }

  create(object: T): Promise<T> {
    return this.rest.request<T>('POST', this.collectionPath(object.metadata.namespace), object);
  }

  replace(object: T): Promise<T> {
    return this.rest.request<T>('PUT', this.objectPath(object.metadata.name!, object.metadata.namespace), object);
  }

  replaceStatus(object: T): Promise<T> {
    return this.rest.request<T>('PUT', `${this.objectPath(object.metadata.name!, object.metadata.namespace)}/status`, object);
  }

  async delete(name: string, namespace?: string): Promise<void> {
    await this.rest.request<unknown>('DELETE', this.objectPath(name, namespace));
  }
}
