import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiEventRecorder, warnAndRethrow } from '../../../controllers/runtime/events.js';
import { silentLogger } from '../../../controllers/runtime/log.js';
import { FakeApiserver } from '../../support/fake-apiserver.js';

let server: FakeApiserver;
beforeEach(async () => {
  server = await FakeApiserver.start();
});
afterEach(async () => {
  await server.stop();
});

type Event = { involvedObject: { kind: string; name: string; namespace?: string; uid?: string }; type: string; reason: string; message: string; source: { component: string } };
const events = () => [...server.objects.entries()].filter(([path]) => path.includes('/events/')).map(([path, e]) => ({ path, ...(e as unknown as Event) }));
const settle = () => new Promise((r) => setTimeout(r, 100));
const claim = { apiVersion: 'local.sdn.cozystack.io/v1alpha1', kind: 'IPAddressClaim', metadata: { name: 'web', namespace: 'tenant-a', uid: 'u1' } };
const address = { apiVersion: 'local.sdn.cozystack.io/v1alpha1', kind: 'IPAddress', metadata: { name: 'ip-203-0-113-7', uid: 'u2' } };

describe('ApiEventRecorder', () => {
  it('writes a core/v1 Event about the object, in its namespace (cluster-scoped: default)', async () => {
    const recorder = new ApiEventRecorder(server.kubeConfig(), 'address-controller', silentLogger);
    recorder.event(claim, 'Warning', 'ClassNotFound', 'IPAddressClass "x" not found');
    recorder.event(address, 'Normal', 'Reclaimed', 'released');
    await settle();
    const written = events().sort((a, b) => a.path.localeCompare(b.path));
    expect(written.map((e) => e.path.split('/events/')[0])).toEqual(['/api/v1/namespaces/default', '/api/v1/namespaces/tenant-a']);
    expect(written[1]).toMatchObject({
      involvedObject: { kind: 'IPAddressClaim', name: 'web', namespace: 'tenant-a', uid: 'u1' },
      type: 'Warning',
      reason: 'ClassNotFound',
      message: 'IPAddressClass "x" not found',
      source: { component: 'address-controller' },
    });
  });

  it('writes the same event for the same object once per window; a new message or object is written', async () => {
    const recorder = new ApiEventRecorder(server.kubeConfig(), 'c', silentLogger);
    for (let i = 0; i < 5; i++) recorder.event(claim, 'Warning', 'ClassNotFound', 'same');
    recorder.event(claim, 'Warning', 'ClassNotFound', 'different');
    recorder.event({ ...claim, metadata: { ...claim.metadata, uid: 'u9' } }, 'Warning', 'ClassNotFound', 'same');
    await settle();
    expect(events()).toHaveLength(3);
  });

  it('never throws into a reconcile when the write fails', async () => {
    const recorder = new ApiEventRecorder(server.kubeConfig(), 'c', silentLogger);
    await server.stop();
    expect(() => recorder.event(claim, 'Normal', 'X', 'y')).not.toThrow();
    await settle();
    server = await FakeApiserver.start();
  });

  it('warnAndRethrow says the apiserver refusal on the object, then rethrows for backoff', () => {
    const said: string[] = [];
    const error = Object.assign(new Error('HTTP-Code: 422'), { code: 422, body: JSON.stringify({ message: 'spec.address: Invalid value' }) });
    expect(() => warnAndRethrow({ event: (_o, type, reason, message) => said.push(`${type} ${reason} ${message}`) }, claim, 'RecordFailed', 'creating IPAddress', error)).toThrow(error);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^Warning RecordFailed creating IPAddress: /);
  });
});
