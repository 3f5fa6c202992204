import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Informer } from '../../../controllers/runtime/informer.js';
import { silentLogger } from '../../../controllers/runtime/log.js';
import { FakeApiserver } from '../../support/fake-apiserver.js';

const PATH = '/apis/example.io/v1/things';
type Thing = { apiVersion: string; kind: string; metadata: { name: string; resourceVersion: string }; spec?: { color?: string } };
const thing = (name: string, resourceVersion: string, color = 'red'): Thing => ({
  apiVersion: 'example.io/v1',
  kind: 'Thing',
  metadata: { name, resourceVersion },
  spec: { color },
});
const until = async (what: string, check: () => boolean, ms = 5_000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

let server: FakeApiserver;
let informer: Informer<Thing> | undefined;
beforeEach(async () => {
  server = await FakeApiserver.start();
});
afterEach(async () => {
  await informer?.stop();
  informer = undefined;
  await server.stop();
});

function start(lists: { items: Thing[]; resourceVersion: string }[]) {
  const events: string[] = [];
  let listed = 0;
  informer = new Informer<Thing>({
    name: 'things',
    path: PATH,
    kubeConfig: server.kubeConfig(),
    log: silentLogger,
    list: async () => {
      const next = lists[Math.min(listed++, lists.length - 1)]!;
      return { items: structuredClone(next.items), metadata: { resourceVersion: next.resourceVersion } };
    },
  });
  informer.addIndex('color', (t) => (t.spec?.color ? [t.spec.color] : []));
  informer.on({
    add: (t) => events.push(`add ${t.metadata.name}`),
    update: (old, t) => events.push(`update ${t.metadata.name} ${old.spec?.color}->${t.spec?.color}`),
    delete: (t) => events.push(`delete ${t.metadata.name}`),
  });
  informer.start();
  return { events, listed: () => listed };
}

describe('Informer', () => {
  it('lists, then watches from the list resourceVersion and keeps cache, indexes and handlers in step', async () => {
    server.onWatch((send) => {
      send('ADDED', thing('b', '11', 'blue'));
      send('MODIFIED', thing('a', '12', 'blue'));
      send('BOOKMARK', { kind: 'Thing', apiVersion: 'example.io/v1', metadata: { resourceVersion: '13' } });
      send('DELETED', thing('b', '14', 'blue'));
    });
    const { events } = start([{ items: [thing('a', '10')], resourceVersion: '10' }]);
    await informer!.synced;
    await until('events', () => events.length === 4);
    expect(events).toEqual(['add a', 'add b', 'update a red->blue', 'delete b']);
    expect(server.watches[0]).toEqual({ path: PATH, resourceVersion: '10' });
    expect(informer!.list().map((t) => t.metadata.name)).toEqual(['a']);
    expect(informer!.byIndex('color', 'blue').map((t) => t.metadata.name)).toEqual(['a']);
    expect(informer!.byIndex('color', 'red')).toEqual([]);
  });

  it('an assumed write is cached and told at once; its own watch event and older ones change nothing', async () => {
    let sendLater!: (type: string, object: unknown) => void;
    server.onWatch((send) => (sendLater = send));
    const { events } = start([{ items: [thing('a', '10')], resourceVersion: '10' }]);
    await informer!.synced;
    await until('the watch', () => sendLater !== undefined);
    const written = informer!.assume(thing('a', '12', 'blue'));
    expect(written.metadata.resourceVersion).toBe('12');
    expect(informer!.get('a')?.spec?.color).toBe('blue');
    expect(informer!.byIndex('color', 'blue').map((t) => t.metadata.name)).toEqual(['a']);
    informer!.assume(thing('a', '11', 'green')); // older than the cache: ignored
    sendLater('MODIFIED', thing('a', '12', 'blue'));
    sendLater('ADDED', thing('c', '13'));
    await until('c', () => events.includes('add c'));
    expect(events).toEqual(['add a', 'update a red->blue', 'add c']);
  });

  it('a late answer to a write never brings back an object whose DELETED event came first (a write that removed its last finalizer)', async () => {
    let sendLater!: (type: string, object: unknown) => void;
    server.onWatch((send) => (sendLater = send));
    const { events } = start([{ items: [thing('a', '10'), thing('b', '10')], resourceVersion: '10' }]);
    await informer!.synced;
    await until('the watch', () => sendLater !== undefined);
    sendLater('DELETED', thing('z', '14')); // never cached
    sendLater('DELETED', thing('a', '15')); // after z: once a is gone, z's event was read too
    await until('a deleted', () => events.includes('delete a'));
    informer!.assume(thing('a', '15', 'blue')); // the update's answer, arriving after the deletion
    informer!.assume(thing('z', '13'));
    expect(informer!.get('a')).toBeUndefined();
    expect(informer!.get('z')).toBeUndefined();
    informer!.assume(thing('a', '17', 'green')); // a later create of the same name is a new object
    expect(events).toContain('add a');
    expect(informer!.get('a')?.spec?.color).toBe('green');
  });

  it('an assumed delete leaves the cache and is told at once; its DELETED event and a late answer to an older write change nothing', async () => {
    let sendLater!: (type: string, object: unknown) => void;
    server.onWatch((send) => (sendLater = send));
    const { events } = start([{ items: [thing('a', '10'), thing('b', '10')], resourceVersion: '10' }]);
    await informer!.synced;
    await until('the watch', () => sendLater !== undefined);
    informer!.assumeDeleted('a');
    informer!.assumeDeleted('nothing'); // never cached: nothing to tell
    expect(informer!.get('a')).toBeUndefined();
    expect(informer!.byIndex('color', 'red').map((t) => t.metadata.name)).toEqual(['b']);
    informer!.assume(thing('a', '10', 'blue')); // an answer to a write older than the delete
    expect(informer!.get('a')).toBeUndefined();
    sendLater('DELETED', thing('a', '11'));
    sendLater('ADDED', thing('c', '12'));
    await until('c', () => events.includes('add c'));
    expect(events).toEqual(['add a', 'add b', 'delete a', 'add c']);
  });

  it('caches objects without managedFields, from lists and watches alike', async () => {
    const managed = (t: Thing) => ({ ...t, metadata: { ...t.metadata, managedFields: [{ manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:spec': {} } }] } });
    server.onWatch((send) => send('ADDED', managed(thing('b', '11'))));
    const { events } = start([{ items: [managed(thing('a', '10'))], resourceVersion: '10' }]);
    await until('events', () => events.length === 2);
    expect(informer!.list().map((t) => Object.keys(t.metadata).sort())).toEqual([
      ['name', 'resourceVersion'],
      ['name', 'resourceVersion'],
    ]);
  });

  it('resumes a watch the server ended from the last resourceVersion it saw (bookmarks included), without relisting', async () => {
    server.onWatch((send, end) => {
      send('ADDED', thing('b', '11'));
      send('BOOKMARK', { kind: 'Thing', apiVersion: 'example.io/v1', metadata: { resourceVersion: '15' } });
      end();
    });
    const { listed } = start([{ items: [thing('a', '10')], resourceVersion: '10' }]);
    await until('second watch', () => server.watches.length >= 2);
    expect(server.watches[1]!.resourceVersion).toBe('15');
    expect(listed()).toBe(1);
  });

  it('relists on 410 Gone, and tells handlers what went away meanwhile', async () => {
    server.onWatch((send) => send('ERROR', { kind: 'Status', apiVersion: 'v1', code: 410, reason: 'Expired', message: 'too old resource version' }));
    const { events, listed } = start([
      { items: [thing('a', '10'), thing('b', '10')], resourceVersion: '10' },
      { items: [thing('a', '20', 'green')], resourceVersion: '20' },
    ]);
    await until('relist', () => listed() === 2 && server.watches.length >= 2);
    expect(events).toEqual(['add a', 'add b', 'update a red->green', 'delete b']);
    expect(server.watches[1]!.resourceVersion).toBe('20');
    expect(informer!.restarts).toBe(0);
  });

  it('ignores a replayed object whose resourceVersion it already has', async () => {
    server.onWatch((send) => {
      send('ADDED', thing('a', '10'));
      send('MODIFIED', thing('a', '11', 'blue'));
    });
    const { events } = start([{ items: [thing('a', '10')], resourceVersion: '10' }]);
    await until('update', () => events.length === 2);
    expect(events).toEqual(['add a', 'update a red->blue']);
  });

  it('stops promptly while a watch is open', async () => {
    start([{ items: [], resourceVersion: '1' }]);
    await until('watching', () => server.watches.length === 1);
    const began = Date.now();
    await informer!.stop();
    expect(Date.now() - began).toBeLessThan(1_000);
    informer = undefined;
  });

  it('stops promptly during its retry backoff', async () => {
    server.onWatch((send) => send('ERROR', { kind: 'Status', apiVersion: 'v1', code: 500, reason: 'InternalError', message: 'boom' }));
    start([{ items: [], resourceVersion: '1' }]);
    await until('a restart', () => informer!.restarts === 1);
    const began = Date.now();
    await informer!.stop();
    expect(Date.now() - began).toBeLessThan(500); // the backoff is 1 s
    informer = undefined;
  });

  it('stops promptly while a watch request has no answer yet (an apiserver that hangs)', async () => {
    server.stallNextWatch();
    const { events } = start([{ items: [], resourceVersion: '1' }]);
    await until('watch requested', () => server.watches.length === 1);
    const began = Date.now();
    await informer!.stop();
    expect(Date.now() - began).toBeLessThan(500);
    expect(events).toEqual([]);
    informer = undefined;
  });
});
