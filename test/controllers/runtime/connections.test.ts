import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shareConnections } from '../../../controllers/runtime/connections.js';
import * as k8s from '@kubernetes/client-node';
import { ResourceClient, RestClient } from '../../../controllers/runtime/rest.js';
import { FakeApiserver } from '../../support/fake-apiserver.js';

const REF = { group: 'local.sdn.cozystack.io', version: 'v1alpha1', plural: 'ipaddressclasses' };
type Getter = { get(name: string): Promise<{ metadata?: { name?: string } }> };
const shortPath = (kubeConfig: k8s.KubeConfig): Getter => new ResourceClient(new RestClient(kubeConfig), REF);

describe('shareConnections', () => {
  let fake: FakeApiserver;
  beforeEach(async () => {
    fake = await FakeApiserver.start();
    fake.objects.set('/apis/local.sdn.cozystack.io/v1alpha1/ipaddressclasses/public', {
      apiVersion: 'local.sdn.cozystack.io/v1alpha1',
      kind: 'IPAddressClass',
      metadata: { name: 'public', resourceVersion: '1' },
    });
  });
  afterEach(() => fake.stop());

  async function requests(client: Getter): Promise<void> {
    for (let i = 0; i < 20; i++) {
      expect((await client.get('public')).metadata?.name).toBe('public');
    }
    await Promise.all(Array.from({ length: 8 }, () => client.get('public')));
  }

  it('client-node alone opens a connection per request (the cost this removes)', async () => {
    const api = fake.kubeConfig().makeApiClient(k8s.CustomObjectsApi);
    await requests({ get: async (name) => (await api.getClusterCustomObject({ ...REF, name })) as { metadata?: { name?: string } } });
    expect(fake.connections).toBeGreaterThanOrEqual(28);
  });

  it('one keep-alive pool serves every request, and counts what it opens', async () => {
    let opened = 0;
    let closed = 0;
    const kubeConfig = shareConnections(fake.kubeConfig(), {
      counters: { connectionOpened: () => opened++, connectionClosed: () => closed++, handshake: () => undefined },
    });
    // Two clients of one process share the pool.
    await requests(shortPath(kubeConfig));
    await requests(shortPath(kubeConfig));
    expect(fake.connections).toBeLessThanOrEqual(8); // at most the parallel burst
    expect(opened).toBe(fake.connections);
    expect(closed).toBe(0);
  });

  it('keeps the refusal of plain HTTP without skipTLSVerify', async () => {
    const kubeConfig = fake.kubeConfig();
    kubeConfig.clusters[0] = { ...kubeConfig.clusters[0]!, skipTLSVerify: false };
    const client = shortPath(shareConnections(kubeConfig));
    await expect(client.get('public')).rejects.toThrow('HTTP protocol is not allowed');
  });
});
