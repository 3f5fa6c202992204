import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RestEventRecorder } from '../../../controllers/runtime/event-recorder.js';
import { REPEAT_WINDOW_MS } from '../../../controllers/runtime/events.js';
import { RestClient } from '../../../controllers/runtime/rest.js';
import { silentLogger } from '../../../controllers/runtime/log.js';
import { FakeApiserver } from '../../support/fake-apiserver.js';

let server: FakeApiserver;
beforeEach(async () => {
  server = await FakeApiserver.start();
});
afterEach(async () => {
  await server.stop();
});

type Written = Record<string, unknown> & { metadata: { name: string; namespace: string; resourceVersion?: string } };
const events = () =>
  [...server.objects.entries()].filter(([path]) => path.includes('/events/')).map(([path, e]) => ({ path, ...(e as unknown as Written) }));
const settle = () => new Promise((r) => setTimeout(r, 100));
const until = async (check: () => boolean) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
};
const claim = {
  apiVersion: 'local.sdn.cozystack.io/v1alpha1',
  kind: 'IPAddressClaim',
  metadata: { name: 'web', namespace: 'tenant-a', uid: 'u1', resourceVersion: '7' },
};
const address = { apiVersion: 'local.sdn.cozystack.io/v1alpha1', kind: 'IPAddress', metadata: { name: 'ip-203-0-113-7', uid: 'u2' } };

describe('RestEventRecorder', () => {
  it('writes a core/v1 Event about the object, in its namespace, with the time it was recorded at', async () => {
    const at = new Date('2026-12-05T08:00:00.123Z');
    new RestEventRecorder(new RestClient(server.kubeConfig()), 'ipaddressclaim-controller', silentLogger, () => at).event(claim, 'Warning', 'ClassNotFound', 'IPAddressClass "x" not found');
    await settle();
    const ours = events();
    expect(ours).toHaveLength(1);
    expect(ours[0]!.path).toMatch(/^\/api\/v1\/namespaces\/tenant-a\/events\//);
    expect(ours[0]).toMatchObject({ type: 'Warning', reason: 'ClassNotFound', message: 'IPAddressClass "x" not found' });
    expect(ours[0]!.metadata.name).toMatch(new RegExp(`^web\\.${at.getTime().toString(16)}[0-9a-f]{4}$`));
    expect(ours[0]).toMatchObject({
      firstTimestamp: at.toISOString(),
      lastTimestamp: at.toISOString(),
      count: 1,
      involvedObject: { apiVersion: claim.apiVersion, kind: 'IPAddressClaim', name: 'web', namespace: 'tenant-a', uid: 'u1', resourceVersion: '7' },
      source: { component: 'ipaddressclaim-controller' },
      reportingComponent: 'ipaddressclaim-controller',
    });
  });

  it('puts Events of cluster-scoped objects in default', async () => {
    new RestEventRecorder(new RestClient(server.kubeConfig()), 'c', silentLogger).event(address, 'Normal', 'Reclaimed', 'released');
    await settle();
    expect(events().map((e) => e.path.split('/events/')[0])).toEqual(['/api/v1/namespaces/default']);
  });

  it('writes an identical event once per window, again after it; a new message or object is written at once', async () => {
    let now = Date.parse('2026-12-05T08:00:00Z');
    const recorder = new RestEventRecorder(new RestClient(server.kubeConfig()), 'c', silentLogger, () => new Date(now));
    for (let i = 0; i < 5; i++) recorder.event(claim, 'Warning', 'ClassNotFound', 'same');
    recorder.event(claim, 'Warning', 'ClassNotFound', 'different');
    recorder.event({ ...claim, metadata: { ...claim.metadata, uid: 'u9' } }, 'Warning', 'ClassNotFound', 'same');
    await settle();
    expect(events()).toHaveLength(3);
    now += REPEAT_WINDOW_MS - 1;
    recorder.event(claim, 'Warning', 'ClassNotFound', 'same');
    await settle();
    expect(events()).toHaveLength(3);
    now += 1;
    recorder.event(claim, 'Warning', 'ClassNotFound', 'same');
    await settle();
    expect(events()).toHaveLength(4);
  });

  it('forgets what left the window, so its book holds one window of events', () => {
    let now = 0;
    const rest = { request: () => Promise.resolve(undefined) } as unknown as RestClient;
    const recorder = new RestEventRecorder(rest, 'c', silentLogger, () => new Date(now));
    for (let i = 0; i < 1_000; i++) {
      now += 1_000;
      recorder.event({ ...claim, metadata: { ...claim.metadata, uid: `u${i}` } }, 'Normal', 'Bound', 'claim is Bound');
    }
    expect(recorder.size).toBe(REPEAT_WINDOW_MS / 1_000);
  });

  it('writes one Event at a time, in the order recorded, each with the time it was recorded at', async () => {
    const sent: { reason: string; at: string }[] = [];
    let inFlight = 0;
    let most = 0;
    const rest = {
      request: async (_method: string, _path: string, body: { reason: string; firstTimestamp: string }) => {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 2));
        sent.push({ reason: body.reason, at: body.firstTimestamp });
        inFlight--;
      },
    } as unknown as RestClient;
    let now = Date.parse('2026-12-05T08:00:00Z');
    const recorder = new RestEventRecorder(rest, 'c', silentLogger, () => new Date(now));
    for (let i = 0; i < 20; i++) {
      now += 1_000;
      recorder.event({ ...claim, metadata: { ...claim.metadata, uid: `u${i}` } }, 'Normal', `R${i}`, 'm');
    }
    expect(recorder.pending).toBeGreaterThan(0);
    await until(() => sent.length === 20);
    expect(most).toBe(1);
    expect(sent.map((e) => e.reason)).toEqual(Array.from({ length: 20 }, (_, i) => `R${i}`));
    expect(sent[19]!.at).toBe(new Date(Date.parse('2026-12-05T08:00:20Z')).toISOString());
    expect(recorder.pending).toBe(0);
  });

  it('never throws into a reconcile when the write fails', async () => {
    const recorder = new RestEventRecorder(new RestClient(server.kubeConfig()), 'c', silentLogger);
    await server.stop();
    expect(() => recorder.event(claim, 'Normal', 'X', 'y')).not.toThrow();
    await settle();
    server = await FakeApiserver.start();
  });
});
