/**
 * One selector, two readers: the core's `selects` and the admission policy's
 * CEL (constructs/packages/class-access-policy.ts), evaluated by a CEL
 * evaluator over the rendered policy. Each case is judged by both, and both
 * must agree with what a metav1.LabelSelector means.
 */
import { describe, expect, it } from 'vitest';
import { holdsPlace, selectorText, selects, type IPAddressClaim, type IPAddressClass, type NamespaceSelector } from '../../../api/v1alpha1/index.js';
import { renderChart, type KubeObject } from '../../support/helm.js';
import { admit } from '../../support/vap.js';
import { systemPackageDir } from '../../support/synth.js';

const CASES: readonly [string, NamespaceSelector | undefined, Record<string, string>, boolean][] = [
  ['no selector: every namespace', undefined, {}, true],
  ['an empty selector: every namespace', {}, { a: 'b' }, true],
  ['matchLabels, all present', { matchLabels: { tier: 'premium', region: 'eu' } }, { tier: 'premium', region: 'eu', x: 'y' }, true],
  ['matchLabels, one value differs', { matchLabels: { tier: 'premium' } }, { tier: 'basic' }, false],
  ['matchLabels, key missing', { matchLabels: { tier: 'premium' } }, {}, false],
  ['In, value listed', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['premium', 'gold'] }] }, { tier: 'gold' }, true],
  ['In, key missing', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['premium'] }] }, {}, false],
  ['NotIn, key missing', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['basic'] }] }, {}, true],
  ['NotIn, value listed', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['basic'] }] }, { tier: 'basic' }, false],
  ['Exists', { matchExpressions: [{ key: 'namespace.cozystack.io/host', operator: 'Exists' }] }, { 'namespace.cozystack.io/host': 'example.org' }, true],
  ['Exists, missing', { matchExpressions: [{ key: 'namespace.cozystack.io/host', operator: 'Exists' }] }, {}, false],
  ['DoesNotExist', { matchExpressions: [{ key: 'legacy', operator: 'DoesNotExist' }] }, { other: '' }, true],
  ['DoesNotExist, present', { matchExpressions: [{ key: 'legacy', operator: 'DoesNotExist' }] }, { legacy: '' }, false],
  [
    'matchLabels and expressions together: both must hold',
    { matchLabels: { tier: 'premium' }, matchExpressions: [{ key: 'region', operator: 'In', values: ['eu'] }] },
    { tier: 'premium', region: 'us' },
    false,
  ],
];

const ipClass = (selector: NamespaceSelector | undefined, name = 'public', isDefault = false): IPAddressClass => ({
  apiVersion: 'local.sdn.cozystack.io/v1alpha1',
  kind: 'IPAddressClass',
  metadata: { name, ...(isDefault ? { annotations: { 'ipaddressclass.local.sdn.cozystack.io/is-default-class': 'true' } } : {}) },
  spec: { provisioner: 'metallb.local.sdn.cozystack.io', ...(selector ? { namespaceSelector: selector } : {}) },
});

const claim = (className?: string) => ({
  apiVersion: 'local.sdn.cozystack.io/v1alpha1',
  kind: 'IPAddressClaim',
  metadata: { name: 'web', namespace: 'tenant-a' },
  spec: { family: 'IPv4', ...(className ? { className } : {}) },
});

type Policy = Parameters<typeof admit>[0];
const policy = renderChart(systemPackageDir('address-controller'), '--namespace', 'cozy-address-controller', '--api-versions', 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy').find(
  (o: KubeObject) => o.kind === 'ValidatingAdmissionPolicy',
) as unknown as Policy;

const namespace = (labels: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tenant-a', labels } });
const TENANT = 'system:serviceaccount:tenant-a:tenant-a';

describe('a class’s namespaceSelector, read by the core and by the admission policy', () => {
  it.each(CASES)('%s', (_name, selector, labels, expected) => {
    expect(selects(selector, labels)).toBe(expected);
    const verdict = admit(policy, { object: claim('public'), oldObject: null, username: TENANT, params: ipClass(selector), namespaceObject: namespace(labels) });
    expect(verdict).toMatchObject({ matched: true, allowed: expected });
  });

  it('the policy judges the class a claim names, or the default class for a claim naming none, and no other', () => {
    const refusing = { matchLabels: { tier: 'premium' } };
    const verdict = (object: unknown, params: IPAddressClass) => admit(policy, { object, oldObject: null, username: TENANT, params, namespaceObject: namespace({}) });
    expect(verdict(claim('other'), ipClass(refusing))).toMatchObject({ allowed: true });
    expect(verdict(claim(), ipClass(refusing))).toMatchObject({ allowed: true });
    expect(verdict(claim(), ipClass(refusing, 'public', true))).toMatchObject({ allowed: false });
    const refused = verdict(claim('public'), ipClass(refusing));
    expect(refused).toMatchObject({ allowed: false });
    expect(refused.matched && refused.messages[0]).toBe(
      `${TENANT} may not claim from IPAddressClass public in namespace tenant-a: the class's spec.namespaceSelector does not select the namespace's labels (kubectl get ipclass shows each class's selector); only classAccess.trustedCallers (users: none; groups: system:masters, system:serviceaccounts:cozy-system, system:serviceaccounts:cozy-cert-manager, system:serviceaccounts:cozy-fluxcd, system:serviceaccounts:kube-system) may`,
    );
  });

  it('lets trusted callers through, and an update that leaves the spec alone', () => {
    const refusing = ipClass({ matchLabels: { tier: 'premium' } });
    expect(admit(policy, { object: claim('public'), oldObject: null, username: 'admin', groups: ['system:masters'], params: refusing, namespaceObject: namespace({}) })).toMatchObject({ allowed: true });
    const bound = { ...claim('public'), metadata: { ...claim('public').metadata, labels: { app: 'web' } } };
    expect(admit(policy, { object: bound, oldObject: claim('public'), username: TENANT, params: refusing, namespaceObject: namespace({}) })).toEqual({ matched: false });
  });

  it('says the selector in kubectl’s words', () => {
    expect(selectorText(undefined)).toBe('every namespace');
    expect(selectorText({ matchLabels: { tier: 'premium' }, matchExpressions: [{ key: 'region', operator: 'In', values: ['eu', 'us'] }, { key: 'x', operator: 'NotIn', values: ['1'] }, { key: 'y', operator: 'Exists' }, { key: 'z', operator: 'DoesNotExist' }] })).toBe(
      'tier=premium,region in (eu,us),x notin (1),y,!z',
    );
  });
});

describe('the places claims hold under a per-namespace limit', () => {
  const withStatus = (status: IPAddressClaim['status']): IPAddressClaim => ({ ...(claim('public') as IPAddressClaim), status });
  const bound = (reason: string) => [{ type: 'Bound', status: 'False' as const, reason, message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }];
  it.each([
    ['no status yet', undefined, false],
    ['Bound', { phase: 'Bound' as const }, true],
    ['Lost', { phase: 'Lost' as const }, true],
    ['Pending, let provision', { phase: 'Pending' as const, conditions: bound('WaitingForProvisioning') }, true],
    ['Pending with an address recorded', { phase: 'Pending' as const, addresses: [{ name: 'a', address: '192.0.2.1' }] }, true],
    ['Pending, over the limit', { phase: 'Pending' as const, conditions: bound('ClassLimitReached') }, false],
    ['Pending, not allowed', { phase: 'Pending' as const, conditions: bound('ClassNotAllowed') }, false],
  ])('%s', (_name, status, expected) => {
    expect(holdsPlace(withStatus(status))).toBe(expected);
  });
});
