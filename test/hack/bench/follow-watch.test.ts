import { afterEach, describe, expect, it } from 'vitest';
import { followWatch, type FollowedWatch } from '../../../hack/bench/follow-watch.js';
import { FakeApiserver } from '../../support/fake-apiserver.js';

const PATH = '/apis/local.sdn.cozystack.io/v1alpha1/ipaddressclaims';
const claim = (name: string) => ({ apiVersion: 'local.sdn.cozystack.io/v1alpha1', kind: 'IPAddressClaim', metadata: { name, namespace: 't', resourceVersion: '1' } });

let fake: FakeApiserver | undefined;
let watch: FollowedWatch | undefined;
afterEach(async () => {
  watch?.stop();
  await fake?.stop();
});

async function until(what: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) {
      throw new Error('timed out');
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the bench’s followed watch', () => {
  it('is started again when the apiserver ends it, and when it goes silent', async () => {
    fake = await FakeApiserver.start();
    fake.onWatch((send, end) => {
      send('ADDED', claim('a'));
      end(); // the apiserver ends the stream
    });
    fake.onWatch((send) => send('ADDED', claim('b'))); // then stays open and silent
    fake.onWatch((send) => send('ADDED', claim('c')));
    const seen: string[] = [];
    watch = await followWatch<ReturnType<typeof claim>>(fake.kubeConfig(), PATH, (c) => seen.push(c.metadata.name), 300);
    await until(() => seen.length === 3);
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(fake.watches.map((w) => w.path)).toEqual([PATH, PATH, PATH]);
  });

  it('once stopped, is not started again', async () => {
    fake = await FakeApiserver.start();
    fake.onWatch((send) => send('ADDED', claim('a')));
    const seen: string[] = [];
    watch = await followWatch<ReturnType<typeof claim>>(fake.kubeConfig(), PATH, (c) => seen.push(c.metadata.name), 200);
    await until(() => seen.length === 1);
    watch.stop();
    await new Promise((r) => setTimeout(r, 800));
    expect(fake.watches).toHaveLength(1);
  });
});
