import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { REPO_ROOT } from '../../support/synth.js';
import { writeFiles } from '../../../synth/output.js';
import { OPERATOR_VALUES } from '../../../constructs/packages/unit-tests.js';
import { synthesize } from '../../../synth/artifact.js';
import { helm, renderChart, type KubeObject } from '../../support/helm.js';
import { systemPackageDir } from '../../support/synth.js';

const files = synthesize();
const text = (path: string) => files.get(path) as string;
const wrapperDir = systemPackageDir;
// Under ghcr.io/cozystack/ but outside ghcr.io/cozystack/cozystack/ (the platform's promotion), tag without a v.
const IMAGE_PIN = /^ghcr\.io\/cozystack\/(address-controller|metallb-iad):[0-9][^@]*@sha256:[0-9a-f]{64}$/;
const operatorValuesFile = (() => {
  const dir = mkdtempSync(join(tmpdir(), 'cozystack-values-'));
  const file = join(dir, 'values.yaml');
  writeFileSync(file, stringify(OPERATOR_VALUES));
  return file;
})();

describe.each([
  ['address-controller', 'cozy-address-controller'],
  ['metallb-iad', 'cozy-metallb-iad'],
])('packages/system/%s', (dir, namespace) => {
  it('is a cozy-<dir> umbrella chart at the placeholder version, without a dependencies block, as real wrappers are', () => {
    const chart = text(`packages/system/${dir}/Chart.yaml`);
    expect(parse(chart)).toEqual({ apiVersion: 'v2', name: `cozy-${dir}`, version: '0.0.0' });
    // packages/system/Makefile finds its charts with grep -F 'version: 0.0.0'; fix-charts writes this line.
    expect(chart.split('\n')).toContain('version: 0.0.0 # Placeholder, the actual version will be automatically set during the build process');
  });

  it('has the Makefile of a real wrapper: NAME, NAMESPACE, package.mk, test and update', () => {
    const makefile = text(`packages/system/${dir}/Makefile`);
    expect(makefile).toMatch(new RegExp(`^export NAME=${dir}$`, 'm'));
    expect(makefile).toMatch(/^export NAMESPACE=cozy-\$\(NAME\)$/m);
    expect(makefile).toMatch(/^include \.\.\/\.\.\/\.\.\/hack\/package\.mk$/m);
    expect(makefile).toMatch(/^test:\n\thelm unittest \.$/m);
    expect(makefile).toMatch(/^update:$/m);
    expect(`cozy-${dir}`).toBe(namespace);
    const tests = [...files.keys()].filter((p) => p.startsWith(`packages/system/${dir}/tests/`));
    expect(tests.length).toBeGreaterThan(0);
    expect(tests.every((p) => p.endsWith('_test.yaml'))).toBe(true);
  });

  it('make update re-vendors charts/ from this project\'s synth', () => {
    const work = mkdtempSync(join(tmpdir(), 'wrapper-update-'));
    cpSync(wrapperDir(dir), join(work, 'packages', 'system', dir), { recursive: true });
    cpSync(join(REPO_ROOT, '..', 'shared', 'cozystack-snapshot', 'hack', 'package.mk'), join(work, 'hack', 'package.mk'), { recursive: true });
    const pkg = join(work, 'packages', 'system', dir);
    rmSync(join(pkg, 'charts'), { recursive: true });
    const refused = spawnSync('make', ['-s', 'update'], { cwd: pkg, encoding: 'utf8' });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('update: set COZY_ADDRESSES to a cozy-addresses checkout');
    const result = spawnSync('make', ['-s', 'update', `COZY_ADDRESSES=${REPO_ROOT}`], { cwd: pkg, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const vendored = readdirSync(join(pkg, 'charts', dir), { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    expect(vendored.length).toBeGreaterThan(5);
    for (const entry of vendored) {
      const path = relative(pkg, join(entry.parentPath, entry.name));
      expect(readFileSync(join(pkg, path), 'utf8'), path).toBe(files.get(`packages/system/${dir}/${path}`));
    }
  }, 60_000);

  it('vendors the upstream chart verbatim under charts/', () => {
    const upstream = [...files.keys()].filter((p) => p.startsWith(`charts/${dir}/`));
    expect(upstream.length).toBeGreaterThan(5);
    for (const path of upstream) {
      expect(files.get(`packages/system/${dir}/${path}`), path).toBe(files.get(path));
    }
    const vendored = [...files.keys()].filter((p) => p.startsWith(`packages/system/${dir}/charts/`));
    expect(vendored).toHaveLength(upstream.length);
  });

  it('renders with the cozystack-values the operator layers under every HelmRelease (_cluster at the root)', () => {
    const result = helm('template', 'r', wrapperDir(dir), '--namespace', namespace, '-f', operatorValuesFile);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('kind: Deployment');
  });

  it.each([
    [`${dir}.controller.replicas=two`, /controller\.replicas: Invalid type/],
    [`${dir}.controller.replica=2`, /controller: Additional property replica is not allowed/],
  ])('still refuses a wrong type or an unknown key inside the keys it owns (--set %s)', (assignment, message) => {
    const result = helm('template', 'r', wrapperDir(dir), '-f', operatorValuesFile, '--set', assignment);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(message);
  });

  it('pins the controller image as tag@sha256 in its own values.yaml', () => {
    const values = parse(text(`packages/system/${dir}/values.yaml`)) as Record<string, { image: Record<string, string> }>;
    const image = values[dir]!.image;
    expect(`${image.repository}:${image.tag}`).toMatch(IMAGE_PIN);
    const deployment = renderChart(wrapperDir(dir), '--namespace', namespace).find((o) => o.kind === 'Deployment') as KubeObject & {
      spec: { template: { spec: { containers: { image: string }[] } } };
    };
    expect(deployment.metadata.namespace).toBe(namespace);
    expect(deployment.spec.template.spec.containers[0]!.image).toMatch(IMAGE_PIN);
  });
});

describe('packages/system/address-controller', () => {
  const rendered = () => renderChart(wrapperDir('address-controller'), '--namespace', 'cozy-address-controller');

  it('installs the CRDs through the vendored chart', () => {
    expect(rendered().filter((o) => o.kind === 'CustomResourceDefinition')).toHaveLength(3);
  });

  it.each([
    ['cozy:addresses:view', 'rbac.cozystack.io/aggregate-to-tenant-view', ['get', 'list', 'watch'], [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get'] }]],
    ['cozy:addresses', 'rbac.cozystack.io/aggregate-to-tenant', ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], []],
    ['cozy:addresses:admin', 'rbac.cozystack.io/aggregate-to-tenant-admin', ['create', 'update', 'patch', 'delete'], []],
  ])('%s aggregates into its cozy:tenant role: claims, and (view) its own namespace', (name, label, verbs, more) => {
    const role = rendered().find((o) => o.kind === 'ClusterRole' && o.metadata.name === name) as KubeObject & { rules: unknown };
    expect(role, name).toBeDefined();
    expect(role.metadata.labels).toEqual({ [label]: 'true' });
    expect(role.rules).toEqual([{ apiGroups: ['local.sdn.cozystack.io'], resources: ['ipaddressclaims'], verbs }, ...more]);
  });

  it('gives the tenant roles nothing on IPAddress and IPAddressClass; every authenticated user reads classes, and values can take that away', () => {
    const tenantRoles = rendered().filter((o) => o.kind === 'ClusterRole' && /^cozy:addresses(:view|:admin)?$/.test(o.metadata.name));
    expect(tenantRoles).toHaveLength(3);
    expect(JSON.stringify(tenantRoles)).not.toMatch(/"ipaddresses"|"ipaddressclasses"/);
    const reader = rendered().find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'cozy:addresses:classes:view') as KubeObject & { rules: unknown };
    expect(reader.rules).toEqual([{ apiGroups: ['local.sdn.cozystack.io'], resources: ['ipaddressclasses'], verbs: ['get', 'list', 'watch'] }]);
    const binding = rendered().find((o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === 'cozy:addresses:classes:view') as KubeObject & { subjects: unknown };
    expect(binding.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }]);
    const without = renderChart(wrapperDir('address-controller'), '--namespace', 'cozy-address-controller', '--set', 'classAccess.tenantsReadClasses=false');
    expect(without.filter((o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === 'cozy:addresses:classes:view')).toEqual([]);
  });

  it('renders the class-access policy only where the apiserver serves ValidatingAdmissionPolicy', () => {
    const policies = (args: string[]) => renderChart(wrapperDir('address-controller'), '--namespace', 'cozy-address-controller', ...args).filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy'));
    expect(policies([]).map((o) => o.kind)).toEqual([]);
    expect(policies(['--api-versions', 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy']).map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'ValidatingAdmissionPolicy/cozystack-ip-address-class-access',
      'ValidatingAdmissionPolicyBinding/cozystack-ip-address-class-access',
    ]);
  });
});

describe('packages/system/metallb-iad', () => {
  it('points the driver at cozy-metallb and keeps placeholders in its own namespace', () => {
    const deployment = renderChart(wrapperDir('metallb-iad'), '--namespace', 'cozy-metallb-iad').find(
      (o) => o.kind === 'Deployment',
    ) as KubeObject & { spec: { template: { spec: { containers: { args: string[] }[] } } } };
    expect(deployment.spec.template.spec.containers[0]!.args).toEqual(
      expect.arrayContaining(['--metallb-namespace=cozy-metallb', '--placeholder-namespace=cozy-metallb-iad']),
    );
  });

  it('refuses a malformed image override through the vendored chart schema', () => {
    const result = helm('template', 'r', wrapperDir('metallb-iad'), '--set', 'metallb-iad.image.tag=main');
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('metallb-iad:');
    expect(result.stderr).toContain('image.tag: Does not match pattern');
  });
});

describe('PackageSources', () => {
  const source = (name: string) =>
    parse(text(`packages/core/platform/sources/${name}.yaml`)) as {
      metadata: { name: string };
      spec: { sourceRef: unknown; variants: { name: string; dependsOn?: string[]; components: Record<string, any>[] }[] }; // any: plain YAML
    };

  it.each(['address-controller', 'metallb-iad'])('cozystack.%s reads the packages artifact at its root', (name) => {
    const s = source(name);
    expect(s.metadata.name).toBe(`cozystack.${name}`);
    expect(s.spec.sourceRef).toEqual({ kind: 'OCIRepository', name: 'cozystack-packages', namespace: 'cozy-system', path: '/' });
    expect(s.spec.variants.map((v) => v.name)).toEqual(['default']);
    expect(s.spec.variants[0]!.components[0]!.path).toBe(`system/${name}`);
  });

  it('installs the core with CRD upgrades and no dependencies', () => {
    const variant = source('address-controller').spec.variants[0]!;
    expect(variant.dependsOn).toBeUndefined();
    expect(variant.components[0]!.install).toEqual({
      namespace: 'cozy-address-controller',
      releaseName: 'address-controller',
      upgradeCRDs: 'CreateReplace',
    });
  });

  it('installs the driver after the core and MetalLB', () => {
    const variant = source('metallb-iad').spec.variants[0]!;
    expect(variant.dependsOn).toEqual(['cozystack.address-controller', 'cozystack.metallb']);
    expect(variant.components[0]!.install).toEqual({ namespace: 'cozy-metallb-iad', releaseName: 'metallb-iad' });
  });

  it('creates no GitRepository and references no external host', () => {
    const text = [...files.entries()].filter(([p]) => p.startsWith('packages/')).map(([, c]) => String(c)).join('\n');
    expect(text).not.toContain('GitRepository');
    // The only URLs are JSON Schema dialect identifiers, which nothing fetches.
    expect(text.replace(/"\$schema": "http:\/\/json-schema\.org\/draft-07\/schema#"/g, '')).not.toMatch(/https?:\/\//);
  });
});

describe('overrides reach what ships: the wrapper follows every override of the chart it vendors', () => {
  const TAG = `2.0.0@sha256:${'ab'.repeat(32)}`;
  const out = mkdtempSync(join(tmpdir(), 'synth-overrides-'));
  writeFiles(out, synthesize({ set: ['metallb-iad.metallbNamespace=my-lb', `metallb-iad.image.tag=${TAG}`, `address-controller.image.tag=${TAG}`] }));
  const pkg = (dir: string) => join(out, 'packages', 'system', dir);
  const args = (dir: string) =>
    (renderChart(pkg(dir), '--namespace', `cozy-${dir}`, '-f', operatorValuesFile).find((o) => o.kind === 'Deployment') as KubeObject & {
      spec: { template: { spec: { containers: { args: string[]; image: string }[] } } };
    }).spec.template.spec.containers[0]!;

  it('writes the override into the wrapper values.yaml, not only into the vendored chart', () => {
    const values = parse(readFileSync(join(pkg('metallb-iad'), 'values.yaml'), 'utf8')) as Record<string, any>; // any: plain YAML
    expect(values['metallb-iad'].metallbNamespace).toBe('my-lb');
    expect(values['metallb-iad'].image.tag).toBe(TAG);
  });

  it('renders the package with the overridden namespace and image', () => {
    expect(args('metallb-iad').args).toContain('--metallb-namespace=my-lb');
    expect(args('metallb-iad').image).toBe(`ghcr.io/cozystack/metallb-iad:${TAG}`);
    expect(args('address-controller').image).toBe(`ghcr.io/cozystack/address-controller:${TAG}`);
  });

  it('moves the shipped helm-unittest expectations with it', () => {
    const suite = readFileSync(join(pkg('metallb-iad'), 'tests', 'metallb-iad_test.yaml'), 'utf8');
    expect(suite).toContain('--metallb-namespace=my-lb');
    expect(suite).not.toContain('--metallb-namespace=cozy-metallb');
  });

  it('addresses a wrapper by its chart name, with its own schema', () => {
    const files = synthesize({ set: ['cozy-metallb-iad.admissionPolicy.driverServiceAccount.name=driver'] });
    expect(files.get('packages/system/metallb-iad/values.yaml')).toContain('name: driver');
    expect(() => synthesize({ set: ['cozy-metallb-iad.admissionPolicy.bogus=1'] })).toThrow(
      'cozy-metallb-iad.admissionPolicy.bogus: unknown field',
    );
    // The open root is for what the platform injects at install, not for synth's own overrides.
    expect(() => synthesize({ set: ['cozy-metallb-iad._cluster.x=1'] })).toThrow('cozy-metallb-iad._cluster: unknown field');
  });
});
