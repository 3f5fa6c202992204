import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { main, recordFrom } from '../../hack/select-install.js';
import { defaultGraph, recordedGraph, selectiveValues } from '../../constructs/platform/source-graph.js';
import { REPO_ROOT } from '../support/synth.js';

const POSTGRES =
  'cozystack.cert-manager cozystack.cozystack-engine cozystack.gateway-api-crds cozystack.keycloak cozystack.keycloak-operator ' +
  'cozystack.networking cozystack.postgres-application cozystack.postgres-operator cozystack.prometheus-operator-crds\n';

function sources(graph: Record<string, string[]>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sources-'));
  for (const [name, deps] of Object.entries(graph)) {
    writeFileSync(
      join(dir, `${name}.yaml`),
      `apiVersion: cozystack.io/v1alpha1\nkind: PackageSource\nmetadata: {name: ${name}}\nspec:\n  variants:\n    - name: default\n      dependsOn: ${JSON.stringify(deps)}\n`,
    );
  }
  return dir;
}

describe('select-install', () => {
  it('gives the documented postgres closure', () => {
    expect(main(['postgres'])).toBe(POSTGRES);
  });

  it('pulls the core and MetalLB into the driver suite, and the engine into every closure', () => {
    expect(main(['metallb-iad']).trim().split(' ')).toEqual(
      expect.arrayContaining(['cozystack.metallb-iad', 'cozystack.address-controller', 'cozystack.metallb', 'cozystack.networking', 'cozystack.cozystack-engine']),
    );
    expect(main(['address-controller'])).toContain('cozystack.cozystack-engine');
  });

  it('reads suites from stdin with -, and prints nothing for none', () => {
    expect(main(['-'], () => 'postgres\n')).toBe(POSTGRES);
    expect(main([])).toBe('');
  });

  it('fails closed on unmapped suites, reporting every one', () => {
    expect(() => main(['postgres', 'nope', 'nada'])).toThrow('suite "nope" maps to no PackageSource\nsuite "nada" maps to no PackageSource');
  });

  it('--validate passes on the real graph', () => {
    expect(main(['--validate'])).toBe('');
  });

  it('--validate reports dangling dependencies, cycles and unmapped suite directories', () => {
    const dir = sources({ 'cozystack.cozystack-engine': [], 'cozystack.a': ['cozystack.b', 'cozystack.ghost'], 'cozystack.b': ['cozystack.a'] });
    const suites = mkdtempSync(join(tmpdir(), 'suites-'));
    mkdirSync(join(suites, 'mystery'));
    writeFileSync(join(suites, 'mystery', 'chainsaw-test.yaml'), '');
    expect(() => main(['--validate', '--sources-dir', dir, '--suites-dir', suites])).toThrow(
      [
        'dangling dependency cozystack.ghost (needed by cozystack.a)',
        'dependency cycle through cozystack.a',
        'dependency cycle through cozystack.b',
        'suite "mystery" maps to no PackageSource',
      ].join('\n'),
    );
    expect(() => main(['--validate', '--sources-dir', dir, '--suites-dir', '/nonexistent'])).toThrow('/nonexistent: no such suites directory');
  });

  it('fails when the engine source is missing', () => {
    expect(() => main(['a', '--sources-dir', sources({ 'cozystack.a': [] })])).toThrow('cozystack.cozystack-engine is not among the sources');
  });

  it('--disabled lists the known packages the suites do not need', () => {
    const disabled = main(['--disabled', 'postgres']).trim().split(' ');
    expect(disabled).toContain('cozystack.metallb');
    expect(disabled).toContain('cozystack.metallb-iad');
    expect(disabled).not.toContain('cozystack.postgres-operator');
    expect(disabled).not.toContain('cozystack.cozystack-engine');
  });

  it('refuses an empty selection for --disabled and --values instead of disabling everything', () => {
    for (const mode of ['--disabled', '--values']) {
      expect(() => main([mode])).toThrow('no suite given: a selective install needs at least one suite (none would disable every package, the engine included)');
      expect(() => main([mode, '-'], () => '\n')).toThrow('no suite given');
    }
  });

  it('the fixture in dist/packages is the postgres selection over the real graph, read as .bundles.disabledPackages[]', () => {
    const path = join(REPO_ROOT, 'dist', 'packages', 'core', 'platform', 'tests', 'fixtures', 'selective-install-postgres-values.yaml');
    const committed = readFileSync(path, 'utf8');
    expect(committed).toBe(selectiveValues(['postgres'], defaultGraph(), recordedGraph().recordedFrom));
    const disabled = (parse(committed) as { bundles: { disabledPackages: string[] } }).bundles.disabledPackages;
    const needed = POSTGRES.trim().split(' ');
    // Every PackageSource is either needed or disabled, never both.
    expect([...disabled, ...needed].sort()).toEqual([...defaultGraph().keys()].sort());
    expect(disabled.filter((name) => needed.includes(name))).toEqual([]);
    expect(disabled).toEqual(expect.arrayContaining(['cozystack.metallb', 'cozystack.metallb-iad', 'cozystack.address-controller', 'cozystack.kubevirt']));
  });
});

describe('the recorded platform graph', () => {
  const snapshot = join(REPO_ROOT, '..', 'shared', 'cozystack-snapshot');

  it('is the PackageSources of the Cozystack checkout it names (re-record with --record DIR)', () => {
    const recorded = recordedGraph();
    expect(Object.keys(recorded.sources).length).toBeGreaterThan(90);
    expect(recordFrom(snapshot)).toEqual(recorded);
  });

  it('--validate passes on the real sources plus ours, read from their directories', () => {
    const real = join(snapshot, 'packages', 'core', 'platform', 'sources');
    const ours = join(REPO_ROOT, 'dist', 'packages', 'core', 'platform', 'sources');
    expect(main(['--validate', '--sources-dir', real, '--sources-dir', ours])).toBe('');
    expect(main(['postgres', '--sources-dir', real, '--sources-dir', ours])).toBe(POSTGRES);
    // Without ours, the driver's suite maps to nothing: the universe is what the directories hold.
    expect(() => main(['metallb-iad', '--sources-dir', real])).toThrow('suite "metallb-iad" maps to no PackageSource');
  });
});
