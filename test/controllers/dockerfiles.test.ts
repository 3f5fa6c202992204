import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { controllerNames } from '../../hack/build.js';
import { RUNTIME_NODE_FLAGS } from '../../hack/lib/node-flags.js';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/synth.js';

describe('controllers/Dockerfile', () => {
  const text = readFileSync(join(REPO_ROOT, 'controllers', 'Dockerfile'), 'utf8');
  const stages = text.split(/^(?=FROM )/m).slice(1);

  it('is the one Dockerfile: no controller has its own', () => {
    const controllers = controllerNames();
    expect(controllers).toEqual(['address-controller', 'metallb-iad']);
    expect(controllers.filter((name) => existsSync(join(REPO_ROOT, 'controllers', name, 'Dockerfile')))).toEqual([]);
  });

  it('is multi-stage, with base images only from digest-pinned build arguments', () => {
    expect(stages.map((s) => s.split('\n')[0])).toEqual(['FROM ${BUILD_IMAGE} AS build', 'FROM ${RUNTIME_IMAGE}']);
    expect(text).toMatch(/^ARG BUILD_IMAGE$/m);
    expect(text).toMatch(/^ARG RUNTIME_IMAGE$/m);
  });

  it('takes the controller from the CONTROLLER build argument in both stages, and fails the build without one', () => {
    for (const stage of stages) {
      expect(stage).toMatch(/^ARG CONTROLLER$/m);
    }
    expect(text).not.toMatch(/^ARG CONTROLLER=/m);
    expect(stages[0]).toMatch(/^RUN npx tsx hack\/build\.ts "\$\{CONTROLLER:\?[^}]+\}"$/m);
    expect(stages[1]).toContain('COPY --from=build /src/build/${CONTROLLER}/ /app/');
    for (const name of controllerNames()) {
      expect(text).toContain(name);
    }
  });

  it('runs the bundle as non-root with the runtime flags', () => {
    expect(stages[1]).toMatch(/^USER 65532:65532$/m);
    // The flags the e2e harness and the benches run the bundle with (hack/lib/node-flags.ts).
    expect(stages[1]).toMatch(new RegExp(`^ENTRYPOINT ${JSON.stringify(['/nodejs/bin/node', ...RUNTIME_NODE_FLAGS, '/app/main.mjs']).replace(/[[\]]/g, '\\$&').replace(/,/g, ', ')}$`, 'm'));
  });
});
