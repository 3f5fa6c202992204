/**
 * The admission of a MetalLB class's own CIDRs, as the metallb-iad package
 * renders it. What the CEL says is tested on the real apiserver (test/e2e/poison.test.ts):
 * `isCIDR` and `cidr()` are Kubernetes' own CEL library.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLASS_POLICY_NAME } from '../../../constructs/packages/metallb-class-policy.js';
import { renderChart, type KubeObject } from '../../support/helm.js';
import { synthesizedArtifact } from '../../support/synth.js';

const VAP_API = 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy';
type Policy = KubeObject & { spec: any }; // any: rendered policy JSON, read field by field

describe('the class-ranges policy', () => {
  const objects = renderChart(join(synthesizedArtifact(), 'packages', 'system', 'metallb-iad'), '--namespace', 'cozy-metallb-iad', '--api-versions', VAP_API);
  const policy = objects.find((o) => o.kind === 'ValidatingAdmissionPolicy' && o.metadata.name === CLASS_POLICY_NAME) as Policy;
  const binding = objects.find((o) => o.kind === 'ValidatingAdmissionPolicyBinding' && o.metadata.name === CLASS_POLICY_NAME) as Policy;

  it('judges creates and updates of IPAddressClasses of the metallb-iad driver only, fails closed, and denies', () => {
    expect(policy.spec.failurePolicy).toBe('Fail');
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: ['local.sdn.cozystack.io'], apiVersions: ['v1alpha1'], operations: ['CREATE', 'UPDATE'], resources: ['ipaddressclasses'] },
    ]);
    expect(policy.spec.matchConditions).toEqual([{ name: 'served-by-metallb-iad', expression: 'object.spec.provisioner == "metallb.drivers.local.sdn.cozystack.io"' }]);
    expect(binding.spec).toEqual({ policyName: CLASS_POLICY_NAME, validationActions: ['Deny'] });
  });

  it('compares CIDR entries only, each against every other, and names the field in its refusal', () => {
    const cidrs = policy.spec.variables.find((v: { name: string }) => v.name === 'cidrs').expression as string;
    expect(cidrs).toContain('isCIDR(e)');
    const [validation] = policy.spec.validations;
    expect(validation.expression).toContain('containsCIDR');
    expect(validation.messageExpression).toContain('spec.parameters.addresses');
  });

  it('is not rendered where the cluster does not serve ValidatingAdmissionPolicy v1', () => {
    const without = renderChart(join(synthesizedArtifact(), 'packages', 'system', 'metallb-iad'), '--namespace', 'cozy-metallb-iad');
    expect(without.some((o) => o.metadata.name === CLASS_POLICY_NAME)).toBe(false);
  });
});
