import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shareConnections } from '../../../controllers/runtime/connections.js';
import { CustomResourceClient } from '../../../controllers/runtime/kube.js';
import { FakeApiserver } from '../../support/fake-apiserver.js';

const REF = { group: 'local.sdn.cozystack.io', version: 'v1alpha1', plural: 'ipaddressclasses', namespaced: false };

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

  async function requests(client: CustomResourceClient<{ metadata: { name?: string } }>): Promise<void> {
    for (let i = 0; i < 20; i++) {
      expect((await client.get('public')).metadata.name).toBe('public');
    }
    await Promise.all(Array.from({ length: 8 }, () => client.get('public')));
  }

  it('client-node alone opens a connection per request (the cost this removes)', async () => {
    await requests(new CustomResourceClient(fake.kubeConfig(), REF));
    expect(fake.connections).toBeGreaterThanOrEqual(28);
  });

  it('one keep-alive pool serves every request, and counts what it opens', async () => {
    let opened = 0;
    let closed = 0;
    const kubeConfig = shareConnections(fake.kubeConfig(), {
      counters: { connectionOpened: () => opened++, connectionClosed: () => closed++, handshake: () => undefined },
    });
    // Two API clients of one process share the pool.
    await requests(new CustomResourceClient(kubeConfig, REF));
    await requests(new CustomResourceClient(kubeConfig, { ...REF, plural: 'ipaddressclasses' }));
    expect(fake.connections).toBeLessThanOrEqual(8); // at most the parallel burst
    expect(opened).toBe(fake.connections);
    expect(closed).toBe(0);
  });

  it('keeps the refusal of plain HTTP without skipTLSVerify', async () => {
    const kubeConfig = fake.kubeConfig();
    kubeConfig.clusters[0] = { ...kubeConfig.clusters[0]!, skipTLSVerify: false };
    const client = new CustomResourceClient(shareConnections(kubeConfig), REF);
    await expect(client.get('public')).rejects.toThrow('HTTP protocol is not allowed');
  });
});
