/**
 * A list+watch cache of one resource, with the resilience client-node's own
 * informer lacks (docs/runtime.md): it resumes from the last resourceVersion,
 * relists on 410 Gone, restarts with backoff (1 s doubling to 30 s) on any
 * other error, and a watchdog aborts a watch that has been silent too long.
 * Secondary indexes map index values to object keys. The watch request is made
 * here (openWatch), not by client-node's Watch: the same request and events,
 * without node-fetch's stream and readline in front of every line.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { StringDecoder } from 'node:string_decoder';
import type * as k8s from '@kubernetes/client-node';
import { apiError, keyOf, type KubeObject } from './kube.js';
import type { Logger } from './log.js';
import type { ResourceClient } from './rest.js';

export interface InformerHandlers<T> {
  add?(object: T): void;
  update?(previous: T, object: T): void;
  delete?(object: T): void;
}

export type IndexFunction<T> = (object: T) => readonly string[];

export interface InformerOptions<T> {
  readonly name: string;
  /** API path, e.g. /apis/local.sdn.cozystack.io/v1alpha1/ipaddresses */
  readonly path: string;
  readonly list: () => Promise<{ items: T[]; metadata?: k8s.V1ListMeta }>;
  readonly kubeConfig: k8s.KubeConfig;
  readonly log: Logger;
  /** Abort a watch with no event (bookmarks included) for this long. @default 5 minutes */
  readonly stallTimeoutMs?: number;
  /** Ask the server to end each watch after this long, so it is re-established regularly. @default 240 */
  readonly watchTimeoutSeconds?: number;
}

/** An informer of the resource a client reads, listing through it and named for its plural. */
export function informerOf<T extends KubeObject>(api: ResourceClient<T>, kubeConfig: k8s.KubeConfig, log: Logger): Informer<T> {
  return new Informer<T>({ name: api.plural, path: api.path, list: () => api.list(), kubeConfig, log });
}

export class Informer<T extends KubeObject> {
  private readonly cache = new Map<string, T>();
  /**
   * Recently deleted keys and the resourceVersion of their deletion: the
   * response to this process's own write can arrive after the object's DELETED
   * event (a write that removed its last finalizer, or a delete racing an
   * update), and must not bring the object back into the cache.
   */
  private readonly tombstones = new Map<string, string | undefined>();
  private readonly indexers = new Map<string, IndexFunction<T>>();
  private readonly indexes = new Map<string, Map<string, Set<string>>>();
  private readonly handlers: InformerHandlers<T>[] = [];
  private resourceVersion: string | undefined;
  private stopped = false;
  private abort: AbortController | undefined;
  private running: Promise<void> | undefined;
  /** Ends the retry backoff early, so stop() never waits it out. */
  private wake: (() => void) | undefined;
  /** True between a watch request and the apiserver's first answer to it. */
  private watchPending = false;
  private syncedOnce!: () => void;
  /** Resolves after the first complete list. */
  readonly synced = new Promise<void>((resolve) => (this.syncedOnce = resolve));
  private isSynced = false;
  /** Restarts after errors, for metrics and tests. */
  restarts = 0;

  constructor(private readonly options: InformerOptions<T>) {}

  get hasSynced(): boolean {
    return this.isSynced;
  }

  addIndex(name: string, fn: IndexFunction<T>): void {
    this.indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.indexes.set(name, index);
    for (const [key, object] of this.cache) {
      this.indexInto(index, fn, key, object);
    }
  }

  on(handlers: InformerHandlers<T>): void {
    this.handlers.push(handlers);
  }

  get(key: string): T | undefined {
    return this.cache.get(key);
  }

  list(): T[] {
    return [...this.cache.values()];
  }

  /** Objects whose index function returned `value`. */
  byIndex(name: string, value: string): T[] {
    const keys = this.indexes.get(name)?.get(value);
    if (!keys) {
      return [];
    }
    return [...keys].map((k) => this.cache.get(k)!).filter(Boolean);
  }

  start(): void {
    this.running ??= this.run();
  }

  /**
   * Stops watching. A watch request still waiting for the apiserver's answer
   * cannot be aborted before it has one (client-node hands out its abort
   * controller only then); it is abandoned and aborted when it resolves, and
   * stop() returns at once instead of waiting on it.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort();
    this.wake?.();
    if (this.watchPending) {
      return;
    }
    await this.running;
  }


  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      let phase: 'list' | 'watch' = 'list';
      try {
        if (this.resourceVersion === undefined) {
          await this.relist();
        }
        phase = 'watch';
        await this.watchOnce();
        failures = 0;
      } catch (error) {
        if (this.stopped) {
          break;
        }
        if ((error as { code?: number }).code === 410 || /\b410\b/.test(String((error as Error)?.message))) {
          this.options.log.info('resourceVersion too old (410 Gone); relisting', { informer: this.options.name });
          this.resourceVersion = undefined;
        }
        this.restarts++;
        const delay = Math.min(1000 * 2 ** failures, 30_000);
        failures++;
        this.options.log.warn(`${phase} failed; retrying`, { informer: this.options.name, delayMs: delay, error: apiError(error) });
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay);
          timer.unref();
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = undefined;
      }
    }
  }

  /** Lists everything, replaces the cache and tells handlers what changed. */
  private async relist(): Promise<void> {
    const result = await this.options.list();
    const seen = new Set<string>();
    for (const object of result.items) {
      const key = keyOf(object);
      seen.add(key);
      this.upsert(key, object);
    }
    for (const [key, object] of [...this.cache]) {
      if (!seen.has(key)) {
        this.remove(key, object);
      }
    }
    this.resourceVersion = result.metadata?.resourceVersion;
    if (!this.isSynced) {
      this.isSynced = true;
      this.syncedOnce();
    }
  }

  private watchOnce(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      let watchdog: NodeJS.Timeout | undefined;
      const finish = (error?: unknown) => {
        if (settled) {
          return;
        }
        settled = true;
        clearTimeout(watchdog);
        this.abort?.abort();
        error ? reject(error) : resolve();
      };
      const stallMs = this.options.stallTimeoutMs ?? 5 * 60_000;
      const pet = () => {
        clearTimeout(watchdog);
        watchdog = setTimeout(() => {
          this.options.log.warn('watch silent too long; restarting it', { informer: this.options.name });
          finish();
        }, stallMs);
        watchdog.unref();
      };
      pet();
      this.watchPending = true;
      openWatch(
        this.options.kubeConfig,
        this.options.path,
        {
          resourceVersion: this.resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds: this.options.watchTimeoutSeconds ?? 240,
        },
        (phase: string, object: T & { code?: number }) => {
          if (this.stopped) {
            return; // an abandoned watch that answered after stop()
          }
          pet();
          if (phase === 'ERROR') {
            if (object.code === 410) {
              this.options.log.info('resourceVersion too old (410 Gone); relisting', { informer: this.options.name });
              this.resourceVersion = undefined; // too old: relist
              finish();
            } else {
              finish(new Error(`watch error: ${JSON.stringify(object)}`));
            }
            return;
          }
          const rv = object.metadata?.resourceVersion;
          if (rv) {
            this.resourceVersion = rv;
          }
          if (phase === 'BOOKMARK') {
            return;
          }
          const key = keyOf(object);
          if (phase === 'DELETED') {
            if (this.cache.has(key)) {
              this.remove(key, object);
            } else {
              this.bury(key, object); // never cached, but a late answer to a write must not bring it in
            }
          } else {
            this.upsert(key, object);
          }
        },
        (error: unknown) => {
          if (error && (error as { name?: string }).name !== 'AbortError' && !this.stopped) {
            finish(error);
          } else {
            finish();
          }
        },
      ).then((controller) => {
        this.watchPending = false;
        this.abort = controller;
        if (this.stopped || settled) {
          controller.abort();
        }
      }, (error: unknown) => {
        this.watchPending = false;
        finish(error);
      });
    });
  }

  /**
   * A write this process made, taken into the cache (and told to handlers)
   * before its watch event arrives, as client-go's MutationCache does: a pass
   * right after a write reads what it wrote, instead of a cache a few
   * milliseconds behind that would make its next write a 409. The watch event
   * of the same version is then a no-op, and older ones are skipped.
   */
  assume<U extends T>(object: U): U {
    const key = keyOf(object);
    if (this.tombstones.has(key) && !isNewer(object.metadata.resourceVersion, this.tombstones.get(key))) {
      return object; // already deleted: an older answer must not resurrect it
    }
    const previous = this.cache.get(key);
    if (!previous || isNewer(object.metadata.resourceVersion, previous.metadata.resourceVersion)) {
      this.upsert(key, object);
    }
    return object;
  }

  /**
   * A delete this process made, taken out of the cache (and told to handlers)
   * once the apiserver answered, before its DELETED event: a pass right after
   * no longer finds the object and deletes it again. The watch event then finds
   * nothing to do; an older answer to a write cannot bring it back.
   */
  assumeDeleted(key: string): void {
    const cached = this.cache.get(key);
    if (cached) {
      this.remove(key, cached);
    }
  }

  private upsert(key: string, object: T): void {
    // As controller-runtime's TransformStripManagedFields: the field managers' records are often
    // half an object's size and nothing here reads them. An update sent without them keeps the
    // server's copy, so writing a cached object back loses nothing.
    delete object.metadata.managedFields;
    const previous = this.cache.get(key);
    if (previous && !isNewer(object.metadata.resourceVersion, previous.metadata.resourceVersion)) {
      return; // a relist or reconnect replay, or an event older than an assumed write
    }
    if (previous) {
      this.unindex(key, previous);
    }
    this.cache.set(key, object);
    for (const [name, fn] of this.indexers) {
      this.indexInto(this.indexes.get(name)!, fn, key, object);
    }
    for (const h of this.handlers) {
      previous ? h.update?.(previous, object) : h.add?.(object);
    }
  }

  private bury(key: string, object: T): void {
    this.tombstones.delete(key); // re-inserted last: the map stays in deletion order
    this.tombstones.set(key, object.metadata.resourceVersion);
    if (this.tombstones.size > MAX_TOMBSTONES) {
      this.tombstones.delete(this.tombstones.keys().next().value!);
    }
  }

  private remove(key: string, object: T): void {
    this.bury(key, object);
    const previous = this.cache.get(key);
    if (previous) {
      this.unindex(key, previous);
    }
    this.cache.delete(key);
    for (const h of this.handlers) {
      h.delete?.(previous ?? object);
    }
  }

  private indexInto(index: Map<string, Set<string>>, fn: IndexFunction<T>, key: string, object: T): void {
    for (const value of fn(object)) {
      let keys = index.get(value);
      if (!keys) {
        keys = new Set();
        index.set(value, keys);
      }
      keys.add(key);
    }
  }

  private unindex(key: string, object: T): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indexes.get(name)!;
      for (const value of fn(object)) {
        const keys = index.get(value);
        keys?.delete(key);
        if (keys?.size === 0) {
          index.delete(value);
        }
      }
    }
  }
}

/**
 * Whether `version` is later than `cached`. resourceVersions are opaque by
 * contract; the apiserver's are etcd revisions, and client-go's MutationCache
 * compares them as integers too. Anything unparsable counts as newer unless
 * equal, as before assumed writes existed.
 */
/** Deleted keys remembered against late answers to this process's writes (a write's answer comes within seconds). */
const MAX_TOMBSTONES = 10_000;

function isNewer(version: string | undefined, cached: string | undefined): boolean {
  if (version === cached) {
    return false;
  }
  if (version && cached && /^\d+$/.test(version) && /^\d+$/.test(cached)) {
    return BigInt(version) > BigInt(cached);
  }
  return true;
}

type WatchCallback = (phase: string, object: never) => void;

/**
 * One watch request, as client-node's `Watch.watch` makes it: GET `path` with
 * watch=true and `params`, each line of the answer a JSON event handed to
 * `onEvent` (a line that does not parse, or whose handling throws, is skipped,
 * as there), `onDone` called once when the answer ends, fails or is aborted.
 * Resolves with the request's AbortController once the apiserver answered (or
 * the request failed). The socket comes from the KubeConfig's agent (shared
 * keep-alive connections, runtime/connections.ts) with TCP keep-alive on.
 */
async function openWatch(
  kubeConfig: k8s.KubeConfig,
  path: string,
  params: Record<string, string | number | boolean | undefined>,
  onEvent: WatchCallback,
  onDone: (error: unknown) => void,
): Promise<AbortController> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) {
    throw new Error('No currently active cluster');
  }
  const url = new URL(cluster.server + path);
  url.searchParams.set('watch', 'true');
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) {
      url.searchParams.set(key, String(value));
    }
  }
  const options: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options);
  const controller = new AbortController();
  let done = false;
  const finish = (error: unknown) => {
    if (!done) {
      done = true;
      controller.abort();
      onDone(error);
    }
  };
  return new Promise<AbortController>((resolve) => {
    const request = (url.protocol === 'http:' ? http : https).request(
      url,
      { ...options, method: 'GET', signal: controller.signal, headers: { ...(options.headers as http.OutgoingHttpHeaders | undefined), Accept: 'application/json' } },
      (response) => {
        response.socket?.setKeepAlive(true, 30_000);
        const code = response.statusCode ?? 0;
        if (code !== 200) {
          response.resume();
          finish(Object.assign(new Error(response.statusMessage || http.STATUS_CODES[code] || 'Internal Server Error'), { statusCode: code }));
          resolve(controller);
          return;
        }
        const decoder = new StringDecoder('utf8');
        let partial = '';
        response.on('data', (chunk: Buffer) => {
          const text = partial + decoder.write(chunk);
          let start = 0;
          for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
            const line = text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end);
            start = end + 1;
            if (line.length > 0) {
              try {
                const event = JSON.parse(line) as { type: string; object: never };
                onEvent(event.type, event.object);
              } catch {
                // as client-node's Watch: a line that does not parse is skipped
              }
            }
          }
          partial = text.slice(start);
        });
        response.on('error', finish);
        response.on('end', () => finish(null));
        response.on('close', () => finish(null));
        resolve(controller);
      },
    );
    request.on('error', (error) => {
      finish(error);
      resolve(controller);
    });
    request.end();
  });
}
