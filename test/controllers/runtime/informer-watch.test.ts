/**
 * The runtime informer's own watch request (controllers/runtime/informer.ts,
 * openWatch), as the core's caches meet it: events cut anywhere by the network,
 * a multi-byte character split between chunks, CRLF line ends, a line that does
 * not parse. (The informer's other rules are in informer.test.ts.)
 */
import { createServer, type ServerResponse } from 'node:http';
import * as k8s from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { Informer } from '../../../controllers/runtime/informer.js';
import { silentLogger } from '../../../controllers/runtime/log.js';
import { loopbackKubeConfig } from '../../support/fake-apiserver.js';

type Thing = { apiVersion: string; kind: string; metadata: { name: string; resourceVersion: string }; spec: { note: string } };
const thing = (name: string, resourceVersion: string, note: string): Thing => ({
  apiVersion: 'example.io/v1',
  kind: 'Thing',
  metadata: { name, resourceVersion },
  spec: { note },
});

let close: (() => Promise<void>) | undefined;
let informer: Informer<Thing> | undefined;
afterEach(async () => {
  await informer?.stop();
  await close?.();
  informer = undefined;
  close = undefined;
});

async function serve(onWatch: (res: ServerResponse, query: URLSearchParams) => void): Promise<k8s.KubeConfig> {
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      onWatch(res, url.searchParams);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return loopbackKubeConfig(server, 't');
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
};

describe('the informer’s watch request', () => {
  it('assembles events the network cut anywhere, multi-byte characters and CRLF included, and skips a line that does not parse', async () => {
    const queries: string[] = [];
    const kubeConfig = await serve((res, query) => {
      queries.push(query.toString());
      const text =
        JSON.stringify({ type: 'ADDED', object: thing('a', '11', 'café ☕ — ok') }) +
        '\r\n' +
        'not json\n' +
        JSON.stringify({ type: 'MODIFIED', object: thing('a', '12', 'ünïcödé') }) +
        '\n' +
        JSON.stringify({ type: 'ADDED', object: thing('b', '13', 'plain') }) +
        '\n';
      const bytes = Buffer.from(text, 'utf8');
      // One byte per write, flushed apart: every split the network could make.
      let i = 0;
      const next = () => {
        if (i < bytes.length) {
          res.write(bytes.subarray(i, ++i), () => setImmediate(next));
        }
      };
      next();
    });
    const seen: string[] = [];
    informer = new Informer<Thing>({
      name: 'things',
      path: '/apis/example.io/v1/things',
      kubeConfig,
      log: silentLogger,
      list: async () => ({ items: [], metadata: { resourceVersion: '10' } }),
    });
    informer.on({
      add: (t) => seen.push(`add ${t.metadata.name} ${t.spec.note}`),
      update: (_old, t) => seen.push(`update ${t.metadata.name} ${t.spec.note}`),
    });
    informer.start();
    await until(() => seen.length === 3);
    expect(seen).toEqual(['add a café ☕ — ok', 'update a ünïcödé', 'add b plain']);
    expect(queries[0]).toBe('watch=true&resourceVersion=10&allowWatchBookmarks=true&timeoutSeconds=240');
  });
});
