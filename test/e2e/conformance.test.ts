/**
 * npm run conformance against the Cozystack snapshot: dist/ passes every check,
 * and each drop-in property, reverted in a copy of dist/, fails the check that
 * guards it. Here rather than in the unit suite because it needs the Go-built
 * yq and helm-unittest (hack/conformance/build-tools.sh), as the e2e needs its
 * binaries.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { conformance, type StepResult } from '../../hack/conformance.js';
import { synthesizedArtifact } from '../support/synth.js';
import { cozystackCheckout } from './support/operator.js';

const failed = (results: readonly StepResult[]) => results.filter((r) => !r.ok).map((r) => r.step);
const check = (dist: string): StepResult[] => {
  const { results, work } = conformance(cozystackCheckout(), dist);
  rmSync(work, { recursive: true, force: true });
  return results;
};

function mutatedDist(edit: (dist: string) => void): string {
  const dist = mkdtempSync(join(tmpdir(), 'dist-reverted-'));
  cpSync(synthesizedArtifact(), dist, { recursive: true });
  edit(dist);
  return dist;
}
const rewrite = (file: string, from: string | RegExp, to: string) => {
  const text = readFileSync(file, 'utf8');
  const next = text.replace(from, to);
  expect(next, `${file}: nothing to revert`).not.toBe(text);
  writeFileSync(file, next);
};
const pkg = (dist: string, ...path: string[]) => join(dist, 'packages', ...path);

describe('npm run conformance -- --cozystack <snapshot>', () => {
  it('passes every check with dist/ as synthesized', () => {
    const results = check(synthesizedArtifact());
    expect(failed(results)).toEqual([]);
    const platform = results.find((r) => r.step === 'helm unittest packages/core/platform')!;
    expect(platform.detail).toMatch(/^before the overlay (\d+)\/\1 tests, after (\d+)\/\2 tests$/);
  }, 300_000);

  it.each<[string, (dist: string) => void, string[]]>([
    [
      'a closed root in a wrapper schema (the operator injects _cluster)',
      (d) => rewrite(pkg(d, 'system', 'metallb-iad', 'values.schema.json'), '"additionalProperties": true,', '"additionalProperties": false,'),
      ['helm unittest packages/system/metallb-iad', 'hack/helm-unit-tests.sh (every package with a test target)', 'helm template packages/system/metallb-iad -f cozystack-values'],
    ],
    [
      'a quoted placeholder version (packages/system/Makefile greps the unquoted line)',
      (d) => rewrite(pkg(d, 'system', 'address-controller', 'Chart.yaml'), /^version: .*$/m, 'version: "0.0.0"'),
      ['packages/system/Makefile (CHARTS at 0.0.0, fix-charts)'],
    ],
    [
      'an image under the platform registry (promote-retag would copy it)',
      (d) => rewrite(pkg(d, 'system', 'metallb-iad', 'values.yaml'), 'repository: ghcr.io/cozystack/metallb-iad', 'repository: ghcr.io/cozystack/cozystack/metallb-iad'),
      ['hack/promote-retag.sh --dry-run', 'hack/lib/image-refs.sh collect_image_refs'],
    ],
    [
      'a platform fragment that restates MetalLB\'s variants',
      (d) =>
        rewrite(
          pkg(d, 'core', 'platform', 'templates', 'bundles', 'addresses.yaml'),
          /\{\{- \$metallb := false \}\}[\s\S]*?\{\{- end \}\}\n\{\{- end \}\}\n/,
          '{{- $metallb := and (has .Values.bundles.system.variant (list "isp-full" "isp-full-generic")) (not (has "cozystack.metallb" (default (list) $bundles.disabledPackages))) }}\n',
        ),
      ['variant gating follows MetalLB (mutated platform chart)'],
    ],
    [
      'a fixture that disables a package postgres needs',
      (d) => rewrite(pkg(d, 'core', 'platform', 'tests', 'fixtures', 'selective-install-postgres-values.yaml'), 'disabledPackages:\n', 'disabledPackages:\n    - cozystack.postgres-operator\n'),
      ['selective-install fixture (.bundles.disabledPackages[])'],
    ],
  ])('fails when reverted: %s', (_name, edit, expected) => {
    const dist = mutatedDist(edit);
    const results = check(dist);
    rmSync(dist, { recursive: true, force: true });
    expect(failed(results)).toEqual(expect.arrayContaining(expected));
  }, 300_000);
});
