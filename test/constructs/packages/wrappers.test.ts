import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { synthesize } from '../../../synth/artifact.js';
import { helm, renderChart, type KubeObject } from '../../support/helm.js';
import { synthesizedArtifact } from '../../support/synth.js';

const files = synthesize();
const text = (path: string) => files.get(path) as string;
const wrapperDir = (dir: string) => join(synthesizedArtifact(), 'packages', 'system', dir);
const IMAGE_PIN = /^ghcr\.io\/cozystack\/cozystack\/(address-controller|metallb-iad):[^@]+@sha256:[0-9a-f]{64}$/;

describe.each([
  ['address-controller', 'cozy-address-controller'],
  ['metallb-iad', 'cozy-metallb-iad'],
])('packages/system/%s', (dir, namespace) => {
  it('is a cozy-<dir> umbrella chart at the placeholder version naming its vendored chart', () => {
    expect(parse(text(`packages/system/${dir}/Chart.yaml`))).toEqual({
      apiVersion: 'v2',
      name: `cozy-${dir}`,
      version: '0.0.0',
      dependencies: [{ name: dir, version: '0.1.0' }],
    });
  });

  it('vendors the upstream chart verbatim under charts/', () => {
    const upstream = [...files.keys()].filter((p) => p.startsWith(`charts/${dir}/`));
    expect(upstream.length).toBeGreaterThan(5);
    for (const path of upstream) {
      expect(files.get(`packages/system/${dir}/${path}`), path).toBe(files.get(path));
    }
    const vendored = [...files.keys()].filter((p) => p.startsWith(`packages/system/${dir}/charts/`));
    expect(vendored).toHaveLength(upstream.length);
  });

  it('passes helm lint --strict', () => {
    const result = helm('lint', '--strict', wrapperDir(dir));
    expect(result.stdout).toContain('0 chart(s) failed');
    expect(result.status).toBe(0);
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
    ['cozy:addresses:view', 'rbac.cozystack.io/aggregate-to-tenant-view', ['get', 'list', 'watch']],
    ['cozy:addresses', 'rbac.cozystack.io/aggregate-to-tenant', ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']],
    ['cozy:addresses:admin', 'rbac.cozystack.io/aggregate-to-tenant-admin', ['create', 'update', 'patch', 'delete']],
  ])('%s aggregates into its cozy:tenant role, on ipaddressclaims only', (name, label, verbs) => {
    const role = rendered().find((o) => o.kind === 'ClusterRole' && o.metadata.name === name) as KubeObject & { rules: unknown };
    expect(role, name).toBeDefined();
    expect(role.metadata.labels).toEqual({ [label]: 'true' });
    expect(role.rules).toEqual([{ apiGroups: ['local.sdn.cozystack.io'], resources: ['ipaddressclaims'], verbs }]);
  });

  it('gives tenants nothing on the cluster-scoped IPAddress and IPAddressClass', () => {
    const tenantRoles = rendered().filter((o) => o.kind === 'ClusterRole' && o.metadata.name.startsWith('cozy:'));
    expect(tenantRoles).toHaveLength(3);
    expect(JSON.stringify(tenantRoles)).not.toMatch(/"ipaddresses"|"ipaddressclasses"/);
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
