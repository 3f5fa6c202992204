/** Kubernetes objects as the controllers see them, and the API errors reconcilers care about. */
import * as k8s from '@kubernetes/client-node';

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: k8s.V1ObjectMeta;
}

export function isConflict(error: unknown): boolean {
  return error instanceof k8s.ApiException && error.code === 409;
}

export function isNotFound(error: unknown): boolean {
  return error instanceof k8s.ApiException && error.code === 404;
}

export function isAlreadyExists(error: unknown): boolean {
  return error instanceof k8s.ApiException && error.code === 409 && String(error.body).includes('AlreadyExists');
}

/** What the apiserver said: the `message` of its Status body, else the error's own text. */
export function apiMessage(error: unknown): string {
  if (error instanceof k8s.ApiException) {
    try {
      const body: unknown = typeof error.body === 'string' ? JSON.parse(error.body) : error.body;
      const message = (body as { message?: unknown } | undefined)?.message;
      if (typeof message === 'string') {
        return message;
      }
    } catch {
      // not JSON: fall through to the code
    }
    return `HTTP ${error.code}`;
  }
  return String((error as Error)?.message ?? error);
}

/** An error as logs carry it: the apiserver's Status code, reason and message, never its raw JSON. */
export interface ApiErrorFields {
  readonly code?: number;
  readonly reason?: string;
  readonly message: string;
}

export function apiError(error: unknown): ApiErrorFields {
  const code = (error as { code?: unknown })?.code;
  const body = (error as { body?: unknown })?.body;
  if (typeof code === 'number' && body !== undefined) {
    let status: { reason?: unknown; message?: unknown } | undefined;
    try {
      status = (typeof body === 'string' ? JSON.parse(body) : body) as typeof status;
    } catch {
      status = undefined;
    }
    return {
      code,
      reason: typeof status?.reason === 'string' ? status.reason : undefined,
      message: typeof status?.message === 'string' ? status.message : typeof body === 'string' && body ? body.slice(0, 300) : `HTTP ${code}`,
    };
  }
  if (typeof code === 'number') {
    return { code, message: String((error as Error).message ?? error) };
  }
  // Transport errors (ECONNREFUSED, TLS) carry a string code on the error or its cause.
  const cause = (error as { cause?: { code?: unknown; message?: unknown } })?.cause;
  const reason = typeof code === 'string' ? code : typeof cause?.code === 'string' ? cause.code : undefined;
  return { reason, message: String((error as Error)?.message ?? error) };
}

/** `namespace/name`, or `name` for cluster-scoped objects: the work-queue key. */
export function keyOf(object: { metadata?: k8s.V1ObjectMeta }): string {
  const meta = object.metadata ?? {};
  return meta.namespace ? `${meta.namespace}/${meta.name}` : String(meta.name);
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** Where a resource is served: group '' is the core API (/api/v1). */
export interface ResourceRef {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

/** A copy of the object with metadata fields replaced. */
export function withMeta<T extends { metadata: object }>(object: T, metadata: Partial<T['metadata']>): T {
  return { ...object, metadata: { ...object.metadata, ...metadata } };
}

/** The object with a finalizer added (once). */
export function withFinalizer<T extends { metadata: { finalizers?: string[] } }>(object: T, finalizer: string): T {
  const finalizers = object.metadata.finalizers ?? [];
  return finalizers.includes(finalizer) ? object : { ...object, metadata: { ...object.metadata, finalizers: [...finalizers, finalizer] } };
}

/** The object with a finalizer removed. */
export function withoutFinalizer<T extends { metadata: { finalizers?: string[] } }>(object: T, finalizer: string): T {
  return { ...object, metadata: { ...object.metadata, finalizers: (object.metadata.finalizers ?? []).filter((f) => f !== finalizer) } };
}

/** A delete (or read) whose object is already gone counts as done. */
export async function ignoreNotFound<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (error) {
    if (isNotFound(error)) {
      return undefined;
    }
    throw error;
  }
}
