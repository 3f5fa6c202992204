/**
 * The apiserver's rules for writes, once, for the unit tests' stand-ins: the
 * HTTP fake (fake-apiserver.ts), the core's store (memory-store.ts) and the
 * driver's cluster (memory-driver.ts).
 *
 * - every write gives the object a fresh resourceVersion (and a uid when it
 *   has none);
 * - an update names the resourceVersion it read: none is 422 (as for custom
 *   resources), a stale one 409 Conflict; a missing object is 404;
 * - a create of a name that exists is 409 AlreadyExists;
 * - an update writes spec and metadata and keeps the stored status, a status
 *   write only the status; a spec change bumps metadata.generation (for an
 *   object that has one);
 * - a delete of an object with finalizers only marks it (deletionTimestamp),
 *   and the write that removes its last finalizer removes it.
 *
 * Errors are thrown as the client library throws them: an ApiException whose
 * body is the apiserver's Status. Real behaviour: test/e2e.
 */
import * as k8s from '@kubernetes/client-node';
import type { IPAddress, IPAddressClaim, IPAddressClass } from '../../api/v1alpha1/index.js';
import { KINDS } from '../../api/v1alpha1/schema/index.js';

interface Meta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  finalizers?: string[];
  creationTimestamp?: Date;
  deletionTimestamp?: Date;
}

/** What the rules read of an object. */
export interface ApiObject {
  metadata?: Meta;
  spec?: unknown;
  status?: unknown;
}

/** A store's objects by key: a Map, or one that keeps indexes as it is written. */
export interface Shelf<T> {
  get(key: string): T | undefined;
  has(key: string): boolean;
  set(key: string, value: T): unknown;
  delete(key: string): unknown;
}

/** `ipaddresses.local.sdn.cozystack.io`: how the apiserver names the API's resources in its messages. */
export const RESOURCE = Object.fromEntries(KINDS.map((k) => [k.kind, `${k.plural}.${k.group}`])) as Record<(IPAddress | IPAddressClaim | IPAddressClass)['kind'], string>;

/** When `kubectl delete` marks an object that has finalizers. */
export const DELETION_TIME = new Date('2026-01-01T00:00:00Z');

/** A refused request, as the client library throws it: the apiserver's Status in the body. */
export function apiError(code: number, reason: string, message: string): k8s.ApiException<string> {
  return new k8s.ApiException(code, message, JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message }), {});
}

export const notFound = (resource: string, name: string | undefined) => apiError(404, 'NotFound', `${resource} "${name}" not found`);

/** The apiserver's optimistic concurrency: `update` must name the resourceVersion of `stored`. */
export function refuseStale(stored: ApiObject, update: ApiObject, resource: string): void {
  const given = update.metadata?.resourceVersion;
  if (!given) {
    throw apiError(422, 'Invalid', `${resource} "${update.metadata?.name}" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`);
  }
  if (given !== stored.metadata?.resourceVersion) {
    throw apiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${resource} "${update.metadata?.name}": the object has been modified; please apply your changes to the latest version and try again`,
    );
  }
}

const clone = <T>(o: T): T => structuredClone(o);

/** The rules over one store's objects, with its resourceVersion counter. */
export class ObjectRules {
  private uid = 0;

  constructor(private revision = 0) {}

  nextRevision(): string {
    return String(++this.revision);
  }

  /** A fresh resourceVersion, and a uid when the object has none; in place. */
  stamp<T extends ApiObject>(object: T): T {
    const metadata = (object.metadata ??= {});
    metadata.uid ??= `uid-${++this.uid}`;
    metadata.resourceVersion = this.nextRevision();
    return object;
  }

  /** POST: 409 AlreadyExists, else stored stamped. `before` runs once the request is accepted. */
  create<T extends ApiObject>(shelf: Shelf<T>, key: string, object: T, resource: string, before?: () => void): T {
    if (shelf.has(key)) {
      throw apiError(409, 'AlreadyExists', `${resource} "${object.metadata?.name}" already exists`);
    }
    before?.();
    const stored = this.stamp(clone(object));
    stored.metadata!.creationTimestamp = new Date(); // as the apiserver sets it
    shelf.set(key, stored);
    return clone(stored);
  }

  /**
   * PUT of the object (`main`) or of its status subresource. `before` runs
   * after the 404 check and before the resourceVersion check: another
   * writer's change made there is seen, as a race the write loses.
   */
  update<T extends ApiObject>(shelf: Shelf<T>, key: string, object: T, resource: string, part: 'main' | 'status', before?: () => void): T {
    if (!shelf.has(key)) {
      throw notFound(resource, object.metadata?.name);
    }
    before?.();
    const current = shelf.get(key);
    if (!current) {
      throw notFound(resource, object.metadata?.name);
    }
    refuseStale(current, object, resource);
    let next: T;
    if (part === 'status') {
      next = { ...clone(current), status: clone(object.status) } as T;
    } else {
      const generation = current.metadata?.generation;
      const metadata: Meta = {
        ...clone(object.metadata),
        uid: current.metadata?.uid,
        deletionTimestamp: current.metadata?.deletionTimestamp,
        generation: generation !== undefined && JSON.stringify(current.spec) !== JSON.stringify(object.spec) ? generation + 1 : generation,
      };
      for (const field of ['uid', 'deletionTimestamp', 'generation'] as const) {
        if (metadata[field] === undefined) {
          delete metadata[field];
        }
      }
      next = { ...clone(object), metadata } as T;
      if (current.status === undefined) {
        delete next.status;
      } else {
        next.status = clone(current.status);
      }
    }
    this.stamp(next);
    if (next.metadata?.deletionTimestamp && !next.metadata.finalizers?.length) {
      shelf.delete(key);
    } else {
      shelf.set(key, next);
    }
    return clone(next);
  }

  /** `kubectl delete`: marks an object with finalizers (a fresh resourceVersion), removes one without. */
  delete<T extends ApiObject>(shelf: Shelf<T>, key: string, resource: string, name: string): 'marked' | 'removed' {
    const current = shelf.get(key);
    if (!current) {
      throw notFound(resource, name);
    }
    if (current.metadata?.finalizers?.length) {
      const marked = clone(current);
      marked.metadata!.deletionTimestamp ??= DELETION_TIME;
      shelf.set(key, this.stamp(marked));
      return 'marked';
    }
    shelf.delete(key);
    return 'removed';
  }
}
