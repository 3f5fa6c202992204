/** A ValidatingAdmissionPolicy and the binding that makes it deny, under one name: how each of the package's policies is installed. */
import type { V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding } from '@kubernetes/client-node';
import type { Construct } from 'constructs';
import type { Templated } from '../helm/expr.js';
import { templatedObject } from '../helm/templated-object.js';

/** A CEL string literal (JSON's string syntax is CEL's). */
export function cel(text: string): string {
  return JSON.stringify(text);
}

/** As Cozystack labels the objects it manages. */
const LABELS = { 'internal.cozystack.io/managed-by-cozystack': '' };

export function denyingPolicy(
  scope: Construct,
  name: string,
  spec: Templated<NonNullable<V1ValidatingAdmissionPolicy['spec']>>,
  binding: Omit<NonNullable<V1ValidatingAdmissionPolicyBinding['spec']>, 'policyName' | 'validationActions'> = {},
): void {
  templatedObject<V1ValidatingAdmissionPolicy>(scope, 'Policy', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name, labels: LABELS },
    spec,
  });
  templatedObject<V1ValidatingAdmissionPolicyBinding>(scope, 'Binding', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name, labels: LABELS },
    spec: { policyName: name, ...binding, validationActions: ['Deny'] },
  });
}
