import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dockerfileConfig, imageKey, stampDigest } from '../../hack/images.js';
import { REPO_ROOT } from '../support/synth.js';

const D = `sha256:${'ab'.repeat(32)}`;

describe('images', () => {
  it("reads the runtime stage's USER, ENTRYPOINT, CMD, EXPOSE and WORKDIR from each Dockerfile", () => {
    for (const controller of ['address-controller', 'metallb-iad']) {
      expect(dockerfileConfig(join(REPO_ROOT, 'controllers', controller, 'Dockerfile'))).toEqual({
        user: '65532:65532',
        entrypoint: ['/nodejs/bin/node', '--max-semi-space-size=1', '/app/main.mjs'],
        cmd: ['--leader-elect', '--health-probe-bind-address=:8081', '--metrics-bind-address=:8080'],
        workingDir: '/app',
        exposedPorts: [8080, 8081],
      });
    }
  });

  it('stamps one pin and leaves the other, and refuses a malformed digest', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'pins-')), 'images.ts');
    copyFileSync(join(REPO_ROOT, 'constructs', 'images.ts'), file);
    expect(stampDigest(file, 'metallb-iad', D)).toBe(true);
    expect(stampDigest(file, 'metallb-iad', D)).toBe(false);
    const text = readFileSync(file, 'utf8');
    expect(text).toMatch(new RegExp(`metallbIad: \\{[\\s\\S]*?digest: '${D}',`));
    expect(text).toMatch(/addressController: \{[\s\S]*?digest: UNPUBLISHED,/);
    expect(() => stampDigest(file, 'metallb-iad', 'sha256:abc')).toThrow('--stamp: sha256:abc is not sha256:<64 hex>');
    expect(imageKey('address-controller')).toBe('addressController');
    expect(() => imageKey('nope')).toThrow('controller nope has no pin in constructs/images.ts');
  });
});
