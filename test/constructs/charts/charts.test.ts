import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IMAGES } from '../../../constructs/images.js';
import { helm, renderChart, type KubeObject } from '../../support/helm.js';
import { synthesizedArtifact } from '../../support/synth.js';

const chartDir = (name: string) => join(synthesizedArtifact(), 'charts', name);
const find = (objects: KubeObject[], kind: string, name?: string) => {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  expect(found, `${kind} ${name ?? ''}`).toHaveLength(1);
  return found[0]! as KubeObject & Record<string, any>; // any: rendered objects are untyped JSON and the assertions read arbitrary fields
};
const container = (objects: KubeObject[]) => find(objects, 'Deployment').spec.template.spec.containers[0];
const rulesOf = (role: Record<string, any>) =>
  (role.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[]).flatMap((r) =>
    r.resources.map((res) => ({ group: r.apiGroups[0], resource: res, verbs: r.verbs })),
  );

describe.each(['address-controller', 'metallb-iad'])('%s chart', (name) => {
  it('passes helm lint --strict', () => {
    const result = helm('lint', '--strict', chartDir(name));
    expect(result.stderr + result.stdout).toContain('0 chart(s) failed');
    expect(result.status).toBe(0);
  });

  it('renders with default values into well-formed Kubernetes objects', async () => {
    const objects = renderChart(chartDir(name), '--namespace', 'cozy-test');
    for (const o of objects) {
      expect(o.apiVersion, JSON.stringify(o)).toMatch(/^[a-z0-9.]*\/?v\d/);
      expect(o.kind).toMatch(/^[A-Z]\w+$/);
      expect(o.metadata.name).toMatch(/^[a-z0-9.-]+$/);
    }
    const result = helm('template', 'release', chartDir(name), '--namespace', 'cozy-test', '--include-crds');
    // The digest is re-stamped whenever the controller's image changes (npm run images -- --stamp); the next test checks it.
    const pin = name === 'address-controller' ? IMAGES.addressController : IMAGES.metallbIad;
    await expect(result.stdout.replaceAll(pin.digest, 'sha256:STAMPED')).toMatchFileSnapshot(`../../golden/${name}.rendered.yaml`);
  });

  it('runs the pinned image, with a token, bounded resources and a locked-down container', () => {
    const objects = renderChart(chartDir(name), '--namespace', 'cozy-test');
    const deployment = find(objects, 'Deployment', name);
    const pin = name === 'address-controller' ? IMAGES.addressController : IMAGES.metallbIad;
    const c = container(objects);
    expect(c.image).toBe(`${pin.repository}:${pin.tag}@${pin.digest}`);
    expect(deployment.metadata.namespace).toBe('cozy-test');
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.template.spec.automountServiceAccountToken).toBe(true);
    expect(deployment.spec.template.spec.serviceAccountName).toBe(name);
    expect(c.resources).toEqual({ requests: { cpu: '10m', memory: '128Mi' }, limits: { memory: '384Mi' } });
    expect(c.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(c.ports).toEqual([
      { name: 'metrics', containerPort: 8080, protocol: 'TCP' },
      { name: 'health', containerPort: 8081, protocol: 'TCP' },
    ]);
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'health' });
    expect(c.args).toEqual(
      expect.arrayContaining([
        '--leader-elect=true',
        '--metrics-bind-address=:8080',
        '--health-probe-bind-address=:8081',
        '--log-level=info',
      ]),
    );
    expect(deployment.spec.template.spec.priorityClassName).toBeUndefined();
  });

  it('takes image, namespace, replicas and other overrides from values', () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    const objects = renderChart(
      chartDir(name),
      '--namespace',
      'elsewhere',
      '--set',
      'image.repository=registry.example/x',
      '--set',
      `image.tag=v9@${digest}`,
      '--set',
      'controller.replicas=0',
      '--set',
      'controller.metricsPort=0',
      '--set',
      'controller.leaderElect=false',
      '--set',
      'controller.priorityClassName=system-cluster-critical',
      '--set',
      'controller.resources.limits.memory=256Mi',
    );
    const deployment = find(objects, 'Deployment', name);
    const c = container(objects);
    expect(c.image).toBe(`registry.example/x:v9@${digest}`);
    expect(deployment.spec.replicas).toBe(0); // scaled down; more than one would need leader election
    expect(deployment.spec.template.spec.priorityClassName).toBe('system-cluster-critical');
    expect(c.resources.limits).toEqual({ memory: '256Mi' });
    expect(c.args).toEqual(expect.arrayContaining(['--leader-elect=false', '--metrics-bind-address=0']));
    expect(c.ports).toEqual([{ name: 'health', containerPort: 8081, protocol: 'TCP' }]);
    for (const o of objects.filter((o) => !['ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'Namespace'].includes(o.kind))) {
      expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe('elsewhere');
    }
    expect(find(objects, 'ClusterRoleBinding').subjects).toEqual([
      { kind: 'ServiceAccount', name, namespace: 'elsewhere' },
    ]);
  });

  it.each([
    [['controller.replicas=abc'], 'controller.replicas: Invalid type. Expected: integer, given: string'],
    [['image.tag=v1.0.0'], "image.tag: Does not match pattern"],
    [['controller.replica=2'], 'Additional property replica is not allowed'],
    [['controller.logLevel=loud'], 'controller.logLevel: controller.logLevel must be one of the following'],
    // Two pods without a Lease would both reconcile.
    [['controller.replicas=2', 'controller.leaderElect=false'], 'controller.replicas: Must be less than or equal to 1'],
  ])('refuses --set %j with a schema error', (sets, message) => {
    const result = helm('template', 'release', chartDir(name), ...sets.flatMap((s) => ['--set', s]));
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(message);
  });

  it('takes several replicas with leader election on', () => {
    const result = helm('template', 'release', chartDir(name), '--set', 'controller.replicas=3');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('grants leader election on Leases in the release namespace only', () => {
    const objects = renderChart(chartDir(name), '--namespace', 'cozy-test');
    const role = find(objects, 'Role', `${name}-leader-election`);
    expect(role.metadata.namespace).toBe('cozy-test');
    expect(rulesOf(role)).toEqual([
      { group: 'coordination.k8s.io', resource: 'leases', verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
    ]);
    expect(find(objects, 'RoleBinding', `${name}-leader-election`).subjects).toEqual([
      { kind: 'ServiceAccount', name, namespace: 'cozy-test' },
    ]);
  });
});

describe('address-controller chart', () => {
  it('ships the three CRDs in crds/', () => {
    const crds = renderChart(chartDir('address-controller')).filter((o) => o.kind === 'CustomResourceDefinition');
    expect(crds.map((c) => c.metadata.name).sort()).toEqual([
      'ipaddressclaims.local.sdn.cozystack.io',
      'ipaddressclasses.local.sdn.cozystack.io',
      'ipaddresses.local.sdn.cozystack.io',
    ]);
  });

  it('grants exactly what the core needs: no create on ipaddresses, nothing on Services, namespaces read-only', () => {
    const rules = rulesOf(find(renderChart(chartDir('address-controller')), 'ClusterRole', 'address-controller'));
    expect(rules).toEqual([
      { group: '', resource: 'events', verbs: ['create', 'patch'] },
      { group: '', resource: 'namespaces', verbs: ['get', 'list', 'watch'] },
      { group: 'local.sdn.cozystack.io', resource: 'ipaddressclasses', verbs: ['get', 'list', 'watch'] },
      { group: 'local.sdn.cozystack.io', resource: 'ipaddressclaims', verbs: ['get', 'list', 'patch', 'update', 'watch'] },
      { group: 'local.sdn.cozystack.io', resource: 'ipaddresses', verbs: ['delete', 'get', 'list', 'patch', 'update', 'watch'] },
      { group: 'local.sdn.cozystack.io', resource: 'ipaddressclaims/status', verbs: ['get', 'patch', 'update'] },
      { group: 'local.sdn.cozystack.io', resource: 'ipaddresses/status', verbs: ['get', 'patch', 'update'] },
      { group: 'local.sdn.cozystack.io', resource: 'ipaddressclaims/finalizers', verbs: ['update'] },
      { group: 'local.sdn.cozystack.io', resource: 'ipaddresses/finalizers', verbs: ['update'] },
    ]);
  });
});

describe('metallb-iad chart', () => {
  it('passes the MetalLB and placeholder namespaces to the driver', () => {
    const args = container(renderChart(chartDir('metallb-iad'), '--namespace', 'cozy-metallb-iad')).args;
    expect(args).toEqual(
      expect.arrayContaining(['--metallb-namespace=metallb-system', '--placeholder-namespace=cozy-metallb-iad']),
    );
  });

  it('keeps placeholders in the release namespace by default and renders no Namespace', () => {
    const objects = renderChart(chartDir('metallb-iad'), '--namespace', 'cozy-metallb-iad');
    expect(objects.filter((o) => o.kind === 'Namespace')).toEqual([]);
    expect(find(objects, 'Role', 'metallb-iad-placeholders').metadata.namespace).toBe('cozy-metallb-iad');
  });

  it('creates a separate placeholder namespace and narrows Service create/delete to it', () => {
    const objects = renderChart(
      chartDir('metallb-iad'),
      '--namespace',
      'cozy-metallb-iad',
      '--set',
      'placeholderNamespace=iad-placeholders',
      '--set',
      'metallbNamespace=cozy-metallb',
    );
    expect(find(objects, 'Namespace').metadata.name).toBe('iad-placeholders');
    const role = find(objects, 'Role', 'metallb-iad-placeholders');
    expect(role.metadata.namespace).toBe('iad-placeholders');
    expect(rulesOf(role)).toEqual([{ group: '', resource: 'services', verbs: ['create', 'delete'] }]);
    expect(container(objects).args).toEqual(
      expect.arrayContaining(['--metallb-namespace=cozy-metallb', '--placeholder-namespace=iad-placeholders']),
    );
  });

  it('grants Services cluster-wide without create/delete (their status only to update: the Attached condition), MetalLB pools and configuration state, ipaddresses with status, and class status', () => {
    const rules = rulesOf(find(renderChart(chartDir('metallb-iad')), 'ClusterRole', 'metallb-iad'));
    const crud = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
    expect(rules).toEqual([
      { group: '', resource: 'events', verbs: ['create', 'patch'] },
      { group: '', resource: 'services', verbs: ['get', 'list', 'patch', 'update', 'watch'] },
      { group: '', resource: 'services/status', verbs: ['update'] },
      { group: 'local.sdn.cozystack.io', resource: 'ipaddressclaims', verbs: ['get', 'list', 'watch'] },
      { group: 'local.sdn.cozystack.io', resource: 'ipaddressclasses', verbs: ['get', 'list', 'watch'] },
      { group: 'local.sdn.cozystack.io', resource: 'ipaddresses', verbs: crud },
      { group: 'local.sdn.cozystack.io', resource: 'ipaddressclaims/status', verbs: ['get', 'patch', 'update'] },
      { group: 'local.sdn.cozystack.io', resource: 'ipaddressclasses/status', verbs: ['get', 'patch', 'update'] },
      { group: 'local.sdn.cozystack.io', resource: 'ipaddresses/status', verbs: ['get', 'patch', 'update'] },
      { group: 'metallb.io', resource: 'bgpadvertisements', verbs: crud },
      { group: 'metallb.io', resource: 'ipaddresspools', verbs: crud },
      { group: 'metallb.io', resource: 'l2advertisements', verbs: crud },
      { group: 'metallb.io', resource: 'configurationstates', verbs: ['get', 'list', 'watch'] },
    ]);
  });

  it('ships no CRDs (they belong to address-controller)', () => {
    expect(renderChart(chartDir('metallb-iad')).filter((o) => o.kind === 'CustomResourceDefinition')).toEqual([]);
  });
});
