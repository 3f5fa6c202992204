import { createServer } from 'node:http';
import * as k8s from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ResourceClient, RestClient } from '../../../controllers/runtime/rest.js';
import { apiError, isConflict, isNotFound, type KubeObject } from '../../../controllers/runtime/kube.js';
import { FakeApiserver, loopbackKubeConfig } from '../../support/fake-apiserver.js';

const ADDRESSES = { group: 'local.sdn.cozystack.io', version: 'v1alpha1', plural: 'ipaddresses' };
const CLAIMS = { group: 'local.sdn.cozystack.io', version: 'v1alpha1', plural: 'ipaddressclaims' };
const addressPath = '/apis/local.sdn.cozystack.io/v1alpha1/ipaddresses/ip-203-0-113-7';
const stored = (resourceVersion: string) => ({
  apiVersion: 'local.sdn.cozystack.io/v1alpha1',
  kind: 'IPAddress',
  metadata: { name: 'ip-203-0-113-7', resourceVersion },
  spec: { className: 'public', address: '203.0.113.7' },
});

let server: FakeApiserver;
beforeEach(async () => {
  server = await FakeApiserver.start();
});
afterEach(async () => {
  await server.stop();
});

describe('RestClient and ResourceClient (the controllers’ writes on the short path)', () => {
  it('PUTs the object to its path and resolves with what the apiserver stored', async () => {
    server.objects.set(addressPath, stored('5'));
    const writer = new ResourceClient<KubeObject & { spec: { className: string } }>(new RestClient(server.kubeConfig()), ADDRESSES);
    const written = await writer.replace({ ...stored('5'), spec: { className: 'other', address: '203.0.113.7' } } as never);
    expect(written.metadata.resourceVersion).not.toBe('5');
    expect(written.spec.className).toBe('other');
    expect(server.requests.at(-1)).toEqual({ method: 'PUT', path: addressPath });
  });

  it('addresses a namespaced object, and its status subresource, by namespace and name', async () => {
    const writer = new ResourceClient<KubeObject>(new RestClient(server.kubeConfig()), CLAIMS);
    const claim = { apiVersion: 'local.sdn.cozystack.io/v1alpha1', kind: 'IPAddressClaim', metadata: { name: 'web', namespace: 'tenant-a', resourceVersion: '1' } };
    await writer.replaceStatus(claim).catch(() => undefined);
    await writer.replace(claim).catch(() => undefined);
    expect(server.requests.slice(-2)).toEqual([
      { method: 'PUT', path: '/apis/local.sdn.cozystack.io/v1alpha1/namespaces/tenant-a/ipaddressclaims/web/status' },
      { method: 'PUT', path: '/apis/local.sdn.cozystack.io/v1alpha1/namespaces/tenant-a/ipaddressclaims/web' },
    ]);
  });

  it('creates into the collection and reads one object back; group "" is the core API, and a namespace narrows the collection', async () => {
    const rest = new RestClient(server.kubeConfig());
    const services = new ResourceClient<KubeObject>(rest, { group: '', version: 'v1', plural: 'services' });
    expect(services.path).toBe('/api/v1/services');
    const created = await services.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'hold', namespace: 'metallb-iad-system' } });
    expect(created.metadata.resourceVersion).toBeTruthy();
    expect((await services.get('hold', 'metallb-iad-system')).metadata.name).toBe('hold');
    const pools = new ResourceClient<KubeObject>(rest, { group: 'metallb.io', version: 'v1beta1', plural: 'ipaddresspools' }, 'metallb-system');
    expect(pools.path).toBe('/apis/metallb.io/v1beta1/namespaces/metallb-system/ipaddresspools');
    await pools.create({ apiVersion: 'metallb.io/v1beta1', kind: 'IPAddressPool', metadata: { name: 'iad-public', namespace: 'metallb-system' } });
    expect(server.requests.slice(-3)).toEqual([
      { method: 'POST', path: '/api/v1/namespaces/metallb-iad-system/services' },
      { method: 'GET', path: '/api/v1/namespaces/metallb-iad-system/services/hold' },
      { method: 'POST', path: '/apis/metallb.io/v1beta1/namespaces/metallb-system/ipaddresspools' },
    ]);
  });

  it('a stale write is client-node’s ApiException 409, read by isConflict and apiError as before', async () => {
    server.objects.set(addressPath, stored('5'));
    const writer = new ResourceClient<KubeObject>(new RestClient(server.kubeConfig()), ADDRESSES);
    const error = await writer.replace(stored('4')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(k8s.ApiException);
    expect(isConflict(error)).toBe(true);
    expect(apiError(error)).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(apiError(error).message).toMatch(/the object has been modified/);
  });

  it('a missing object is a 404 isNotFound reads', async () => {
    const rest = new RestClient(server.kubeConfig());
    const error = await rest.request('GET', '/apis/local.sdn.cozystack.io/v1alpha1/ipaddresses/nope').catch((e: unknown) => e);
    expect(isNotFound(error)).toBe(true);
  });

  it('a refused credential is read again from the KubeConfig and the request tried once more', async () => {
    let token = 'old';
    const seen: string[] = [];
    const api = createServer((req, res) => {
      seen.push(String(req.headers.authorization));
      const ok = req.headers.authorization === 'Bearer new';
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
      res.end(ok ? '{"ok":true}' : '{"kind":"Status","code":401}');
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    try {
      const kc = loopbackKubeConfig(api, 'old');
      const rest = new RestClient(kc);
      const first = await rest.request('GET', '/x').catch((e: unknown) => e);
      expect((first as k8s.ApiException<undefined>).code).toBe(401);
      token = 'new';
      kc.users[0] = { ...kc.users[0]!, token };
      await expect(rest.request('GET', '/x')).resolves.toEqual({ ok: true });
      expect(seen).toEqual(['Bearer old', 'Bearer old', 'Bearer old', 'Bearer new']);
    } finally {
      api.closeAllConnections();
      await new Promise((resolve) => api.close(resolve));
    }
  });

  it('lists in pages of 500 with the continue token, as client-go’s reflector, and returns the list’s resourceVersion', async () => {
    const asked: string[] = [];
    const all = Array.from({ length: 1_234 }, (_, i) => ({ apiVersion: 'v', kind: 'IPAddress', metadata: { name: `a${i}`, resourceVersion: String(i) } }));
    const api = createServer((req, res) => {
      asked.push(req.url!);
      const url = new URL(req.url!, 'http://x');
      const from = Number(url.searchParams.get('continue') ?? 0);
      const limit = Number(url.searchParams.get('limit'));
      const next = from + limit < all.length ? String(from + limit) : undefined;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'IPAddressList', metadata: { resourceVersion: '9000', ...(next ? { continue: next } : {}) }, items: all.slice(from, from + limit) }));
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    try {
      const kc = loopbackKubeConfig(api, 't');
      const listed = await new ResourceClient<KubeObject>(new RestClient(kc), ADDRESSES).list();
      expect(listed.items.map((i) => i.metadata.name)).toEqual(all.map((i) => i.metadata.name));
      expect(listed.metadata.resourceVersion).toBe('9000');
      expect(asked).toEqual([
        '/apis/local.sdn.cozystack.io/v1alpha1/ipaddresses?limit=500',
        '/apis/local.sdn.cozystack.io/v1alpha1/ipaddresses?limit=500&continue=500',
        '/apis/local.sdn.cozystack.io/v1alpha1/ipaddresses?limit=500&continue=1000',
      ]);
    } finally {
      api.closeAllConnections();
      await new Promise((resolve) => api.close(resolve));
    }
  });

  it('rides the KubeConfig’s shared keep-alive connections', async () => {
    const { shareConnections } = await import('../../../controllers/runtime/connections.js');
    server.objects.set(addressPath, stored('1'));
    const rest = new RestClient(shareConnections(server.kubeConfig()));
    for (let i = 0; i < 5; i++) {
      await rest.request('GET', addressPath);
    }
    expect(server.connections).toBe(1);
  });
});
