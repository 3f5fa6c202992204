/** Small helpers over @kubernetes/client-node for the end-to-end assertions. */
import * as https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import { expect } from 'vitest';

export const GROUP = 'local.sdn.cozystack.io';
export const VERSION = 'v1alpha1';

/** Expects the call to fail with this HTTP status and a body mentioning `text`. */
export async function expectRejected(call: Promise<unknown>, status: number, text?: string): Promise<void> {
  let error: unknown;
  try {
    await call;
  } catch (e) {
    error = e;
  }
  expect(error, `expected HTTP ${status}${text ? ` mentioning ${JSON.stringify(text)}` : ''}, got success`).toBeInstanceOf(k8s.ApiException);
  const apiError = error as k8s.ApiException<unknown>;
  const body = typeof apiError.body === 'string' ? apiError.body : JSON.stringify(apiError.body);
  expect(apiError.code, body).toBe(status);
  if (text) {
    expect(statusMessage(body)).toContain(text);
  }
}

export function apis(kc: k8s.KubeConfig) {
  return {
    core: kc.makeApiClient(k8s.CoreV1Api),
    apps: kc.makeApiClient(k8s.AppsV1Api),
    coordination: kc.makeApiClient(k8s.CoordinationV1Api),
    rbac: kc.makeApiClient(k8s.RbacAuthorizationV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
    objects: k8s.KubernetesObjectApi.makeApiClient(kc),
  };
}

/** Server-side apply with dryRun=All: what `kubectl apply --server-side --dry-run=server` does. */
export async function dryRunApply(kc: k8s.KubeConfig, object: k8s.KubernetesObject): Promise<void> {
  await k8s.KubernetesObjectApi.makeApiClient(kc).patch(object, undefined, 'All', 'e2e', true, k8s.PatchStrategy.ServerSideApply);
}

/** The `message` of a Kubernetes Status body, or the body itself. */
function statusMessage(body: string): string {
  try {
    return String((JSON.parse(body) as { message?: string }).message ?? body);
  } catch {
    return body;
  }
}

/** GET a raw apiserver path (discovery, /metrics) as the kubeconfig's user; the body as text. */
export async function getRaw(kubeConfig: k8s.KubeConfig, path: string, headers: Record<string, string> = {}): Promise<string> {
  const options: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options);
  const server = new URL(kubeConfig.getCurrentCluster()!.server);
  return new Promise<string>((resolve, reject) => {
    const request = https.get({ ...options, headers: { ...options.headers, ...headers }, hostname: server.hostname, port: server.port, path }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => (response.statusCode === 200 ? resolve(body) : reject(new Error(`${path}: HTTP ${response.statusCode}`))));
    });
    request.on('error', reject);
  });
}
