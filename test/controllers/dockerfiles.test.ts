import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUNTIME_NODE_FLAGS } from '../../hack/lib/node-flags.js';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/synth.js';

const controllers = readdirSync(join(REPO_ROOT, 'controllers')).filter((c) => existsSync(join(REPO_ROOT, 'controllers', c, 'main.ts')));

describe.each(controllers)('controllers/%s/Dockerfile', (name) => {
  const text = readFileSync(join(REPO_ROOT, 'controllers', name, 'Dockerfile'), 'utf8');
  const froms = text.split('\n').filter((l) => l.startsWith('FROM '));

  it('is multi-stage, with base images only from digest-pinned build arguments', () => {
    expect(froms).toHaveLength(2);
    for (const from of froms) {
      expect(from).toMatch(/^FROM \$\{(BUILD|RUNTIME)_IMAGE\}( AS build)?$/);
    }
    expect(text).toMatch(/^ARG BUILD_IMAGE$/m);
    expect(text).toMatch(/^ARG RUNTIME_IMAGE$/m);
  });

  it('bundles with npm run build and runs the bundle as non-root', () => {
    expect(text).toContain(`RUN npx tsx hack/build.ts ${name}`);
    expect(text).toContain(`COPY --from=build /src/build/${name}/ /app/`);
    expect(text).toMatch(/^USER 65532:65532$/m);
    // The flags the e2e harness and the benches run the bundle with (hack/lib/node-flags.ts).
    expect(text).toMatch(new RegExp(`^ENTRYPOINT ${JSON.stringify(['/nodejs/bin/node', ...RUNTIME_NODE_FLAGS, '/app/main.mjs']).replace(/[[\]]/g, '\\$&').replace(/,/g, ', ')}$`, 'm'));
  });
});
