import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareWithStamps, DOCKERFILE, dockerfileConfig, imageKey, RESTAMP_COMMAND, stampDigest, stampedDigest } from '../../hack/images.js';
import { REPO_ROOT } from '../support/synth.js';

const D = `sha256:${'ab'.repeat(32)}`;

describe('images', () => {
  it("reads the runtime stage's USER, ENTRYPOINT, CMD, EXPOSE and WORKDIR from the controllers' Dockerfile", () => {
    expect(DOCKERFILE).toBe(join(REPO_ROOT, 'controllers', 'Dockerfile'));
    expect(dockerfileConfig(DOCKERFILE)).toEqual({
      user: '65532:65532',
      entrypoint: ['/nodejs/bin/node', '--max-semi-space-size=1', '--optimize-for-size', '/app/main.mjs'],
      cmd: ['--leader-elect', '--health-probe-bind-address=:8081', '--metrics-bind-address=:8080'],
      workingDir: '/app',
      exposedPorts: [8080, 8081],
    });
  });

  it('stamps one pin and leaves the other, and refuses a malformed digest', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'pins-')), 'images.ts');
    copyFileSync(join(REPO_ROOT, 'constructs', 'images.ts'), file);
    const other = stampedDigest(file, 'address-controller');
    expect(stampDigest(file, 'metallb-iad', D)).toBe(true);
    expect(stampDigest(file, 'metallb-iad', D)).toBe(false);
    const text = readFileSync(file, 'utf8');
    expect(text).toMatch(new RegExp(`metallbIad: \\{[\\s\\S]*?digest: '${D}',`));
    expect(stampedDigest(file, 'metallb-iad')).toBe(D);
    expect(stampedDigest(file, 'address-controller')).toBe(other);
    expect(() => stampDigest(file, 'metallb-iad', 'sha256:abc')).toThrow('--stamp: sha256:abc is not sha256:<64 hex>');
    expect(imageKey('address-controller')).toBe('addressController');
    expect(() => imageKey('nope')).toThrow('controller nope has no pin in constructs/images.ts');
  });

  it('carries real digests: no pin of a controller is the all-zero placeholder', () => {
    for (const controller of ['address-controller', 'metallb-iad']) {
      expect(stampedDigest(join(REPO_ROOT, 'constructs', 'images.ts'), controller)).toMatch(/^sha256:(?!0{64})[0-9a-f]{64}$/);
    }
  });

  it('--check compares each built digest with the stamped one: a line per image, then the command that re-stamps', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'pins-')), 'images.ts');
    copyFileSync(join(REPO_ROOT, 'constructs', 'images.ts'), file);
    stampDigest(file, 'address-controller', D);
    stampDigest(file, 'metallb-iad', D);
    const other = `sha256:${'cd'.repeat(32)}`;
    expect(compareWithStamps(file, new Map([['address-controller', D], ['metallb-iad', D]]))).toEqual({
      matched: [`address-controller ${D} is the stamped digest`, `metallb-iad ${D} is the stamped digest`],
      mismatches: [],
    });
    expect(compareWithStamps(file, new Map([['address-controller', D], ['metallb-iad', other]]))).toEqual({
      matched: [`address-controller ${D} is the stamped digest`],
      mismatches: [
        `metallb-iad: stamped ${D} (${file}), built ${other}`,
        'what the images hold changed since the stamp: run npm run images -- --stamp && npm run synth, and commit both',
      ],
    });
    expect(RESTAMP_COMMAND).toBe('npm run images -- --stamp && npm run synth');
  });
});
