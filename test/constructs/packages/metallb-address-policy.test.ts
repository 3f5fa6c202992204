import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { FENCED_ANNOTATIONS, FENCED_LABELS, POLICY_NAME } from '../../../constructs/packages/metallb-address-policy.js';
import { renderChart, type KubeObject } from '../../support/helm.js';
import { synthesizedArtifact } from '../../support/synth.js';
import { admit } from '../../support/vap.js';

const VAP_API = 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy';
const chart = () => join(synthesizedArtifact(), 'packages', 'system', 'metallb-iad');
const DRIVER = 'system:serviceaccount:cozy-metallb-iad:metallb-iad';
const TENANT = 'tenant-a-admin';

function service(namespace: string, annotations?: Record<string, string>, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace, ...(annotations ? { annotations } : {}) },
    spec: { type: 'LoadBalancer', ports: [{ port: 80 }], ...spec },
  };
}

const CARRIER = 'metallb.drivers.local.sdn.cozystack.io/carrier';
const labelled = <T extends { metadata: object }>(object: T, label: string): T => ({ ...object, metadata: { ...object.metadata, labels: { [label]: 'true' } } });

describe('the MetalLB annotation fence', () => {
  let policy: KubeObject & { spec: any }; // any: rendered policy JSON, read field by field
  beforeAll(() => {
    const objects = renderChart(chart(), '--namespace', 'cozy-metallb-iad', '--api-versions', VAP_API);
    policy = objects.find((o) => o.kind === 'ValidatingAdmissionPolicy') as typeof policy;
    expect(policy).toBeDefined();
  });

  it('admissionPolicy.required turns the silent skip into a failed render that names --api-versions', () => {
    expect(() => renderChart(chart(), '--namespace', 'cozy-metallb-iad', '--set', 'admissionPolicy.required=true')).toThrow(
      'admissionPolicy.required is true, but this cluster does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (for helm template: --api-versions admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy)',
    );
    const required = renderChart(chart(), '--namespace', 'cozy-metallb-iad', '--set', 'admissionPolicy.required=true', '--api-versions', VAP_API);
    expect(required.filter((o) => o.kind === 'ValidatingAdmissionPolicy')).toHaveLength(1);
  });

  it('is rendered only where the cluster serves ValidatingAdmissionPolicy v1 (capability gate)', () => {
    const without = renderChart(chart(), '--namespace', 'cozy-metallb-iad');
    expect(without.filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy'))).toEqual([]);
    const withApi = renderChart(chart(), '--namespace', 'cozy-metallb-iad', '--api-versions', VAP_API);
    expect(withApi.filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy')).map((o) => o.kind)).toEqual([
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]);
  });

  it('denies, fails closed, covers the Service and its status subresource, and binds under the same name', () => {
    const objects = renderChart(chart(), '--namespace', 'cozy-metallb-iad', '--api-versions', VAP_API);
    const binding = objects.find((o) => o.kind === 'ValidatingAdmissionPolicyBinding')!;
    expect(policy.metadata.name).toBe(POLICY_NAME);
    expect(policy.spec.failurePolicy).toBe('Fail');
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['services', 'services/status'] },
    ]);
    expect(binding.metadata.name).toBe(POLICY_NAME);
    expect(binding.spec).toEqual({ policyName: POLICY_NAME, validationActions: ['Deny'] });
  });

  it('exempts the driver ServiceAccount of the release', () => {
    expect(policy.spec.matchConditions).toContainEqual({
      name: 'not-the-driver',
      expression: `request.userInfo.username != "${DRIVER}"`,
    });
  });

  const pin = { 'metallb.io/loadBalancerIPs': '203.0.113.7' };
  const cases: [string, unknown, unknown, string, boolean | 'not-matched'][] = [
    ['create without annotations', service('tenant-a'), null, TENANT, true],
    ['create with the claim annotation', service('tenant-a', { 'local.sdn.cozystack.io/ip-address-claim': 'web' }), null, TENANT, true],
    ['create with a pin', service('tenant-a', pin), null, TENANT, false],
    ['create with a pool', service('tenant-a', { 'metallb.io/address-pool': 'iad-public' }), null, TENANT, false],
    ['create with a legacy pin', service('tenant-a', { 'metallb.universe.tf/loadBalancerIPs': '203.0.113.7' }), null, TENANT, false],
    ['create with spec.loadBalancerIP', service('tenant-a', undefined, { loadBalancerIP: '203.0.113.7' }), null, TENANT, false],
    ['introduce a pin on update', service('tenant-a', pin), service('tenant-a'), TENANT, false],
    ['change a pin', service('tenant-a', { 'metallb.io/loadBalancerIPs': '203.0.113.8' }), service('tenant-a', pin), TENANT, false],
    [
      'edit the rest of a pinned Service (pin unchanged)',
      service('tenant-a', { ...pin, team: 'web' }, { ports: [{ port: 443 }] }),
      service('tenant-a', pin),
      TENANT,
      true,
    ],
    ['remove a pin', service('tenant-a'), service('tenant-a', pin), TENANT, true],
    ['create with the carrier label', labelled(service('tenant-a'), CARRIER), null, TENANT, false],
    ['introduce the carrier label on update', labelled(service('tenant-a'), CARRIER), service('tenant-a'), TENANT, false],
    ['keep the carrier label the driver set', labelled(service('tenant-a', { team: 'web' }), CARRIER), labelled(service('tenant-a'), CARRIER), TENANT, true],
    ['remove the carrier label', service('tenant-a'), labelled(service('tenant-a'), CARRIER), TENANT, true],
    ['the driver labels', labelled(service('tenant-a'), CARRIER), service('tenant-a'), DRIVER, 'not-matched'],
    ['the driver pins', service('tenant-a', pin), service('tenant-a'), DRIVER, 'not-matched'],
    ['another namespace', service('cozy-system', pin), null, TENANT, 'not-matched'],
    ['a namespace that only contains "tenant-"', service('my-tenant-a', pin), null, TENANT, 'not-matched'],
  ];

  it.each(cases)('%s', (_name, object, oldObject, username, expected) => {
    const verdict = admit(policy, { object, oldObject, username });
    if (expected === 'not-matched') {
      expect(verdict.matched).toBe(false);
    } else {
      expect(verdict).toMatchObject({ matched: true, allowed: expected });
    }
  });

  it('names the annotation and the namespace when it denies', () => {
    for (const key of FENCED_ANNOTATIONS) {
      const verdict = admit(policy, { object: service('tenant-b', { [key]: 'x' }), oldObject: null, username: TENANT });
      expect(verdict).toEqual({
        matched: true,
        allowed: false,
        messages: [
          `only the metallb-iad driver may set or change the annotation ${key} on Services in namespace tenant-b; ` +
            'ask for an address with the annotation local.sdn.cozystack.io/ip-address-claim instead',
        ],
      });
    }
  });

  it('names the carrier label and the namespace when it denies', () => {
    expect(FENCED_LABELS).toEqual([CARRIER]);
    const verdict = admit(policy, { object: labelled(service('tenant-b'), CARRIER), oldObject: null, username: TENANT });
    expect(verdict).toEqual({
      matched: true,
      allowed: false,
      messages: [
        `only the metallb-iad driver may set or change the label ${CARRIER} on Services in namespace tenant-b; ` +
          'ask for an address with the annotation local.sdn.cozystack.io/ip-address-claim instead',
      ],
    });
  });

  it('follows a driver ServiceAccount set in values', () => {
    const objects = renderChart(
      chart(),
      '--namespace',
      'cozy-metallb-iad',
      '--api-versions',
      VAP_API,
      '--set',
      'admissionPolicy.driverServiceAccount.namespace=iad',
      '--set',
      'admissionPolicy.driverServiceAccount.name=driver',
    );
    const custom = objects.find((o) => o.kind === 'ValidatingAdmissionPolicy') as typeof policy;
    const request = { object: service('tenant-a', pin), oldObject: null };
    expect(admit(custom, { ...request, username: 'system:serviceaccount:iad:driver' }).matched).toBe(false);
    expect(admit(custom, { ...request, username: DRIVER })).toMatchObject({ matched: true, allowed: false });
  });
});
