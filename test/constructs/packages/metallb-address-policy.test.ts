import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { FENCED_ANNOTATIONS, FENCED_LABELS, POLICY_NAME } from '../../../constructs/packages/metallb-address-policy.js';
import { CLASS_POLICY_NAME } from '../../../constructs/packages/metallb-class-policy.js';
import { COZYSTACK_TRUSTED_GROUPS } from '../../../constructs/packages/trusted-callers.js';
import { synthesize } from '../../../synth/artifact.js';
import { helm, renderChart, type KubeObject } from '../../support/helm.js';
import { synthesizedArtifact } from '../../support/synth.js';
import { admit } from '../../support/vap.js';

const VAP_API = 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy';
const chart = () => join(synthesizedArtifact(), 'packages', 'system', 'metallb-iad');
const DRIVER = 'system:serviceaccount:cozy-metallb-iad:metallb-iad';
/** The adoption Job's ServiceAccount (its undo puts an admin's pins back). */
const ADOPTER = 'system:serviceaccount:cozy-metallb-iad:metallb-iad-adopt';
const TENANT = 'tenant-a-admin';
/** Who may, as the default values render it into each refusal. */
const DEFAULT_WHO_MAY =
  `the metallb-iad driver (${DRIVER}) and admissionPolicy.trustedCallers (users: none; groups: ` +
  'system:masters, system:serviceaccounts:cozy-system, system:serviceaccounts:cozy-cert-manager, system:serviceaccounts:cozy-fluxcd, system:serviceaccounts:kube-system)';
const HINT = 'ask for an address with the annotation local.sdn.cozystack.io/ip-address-claim instead';
const COPIER_HINT =
  ' (a copying deputy, admissionPolicy.copyingDeputies, may bring it along on a Service that carries that annotation: the driver then chooses the address)';
const CLAIM = 'local.sdn.cozystack.io/ip-address-claim';
/** A tenant cluster's cloud-controller-manager in tenant-a. */
const KCCM = 'system:serviceaccount:tenant-a:kubernetes-x-kccm';

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
    policy = objects.find((o) => o.kind === 'ValidatingAdmissionPolicy' && o.metadata.name === POLICY_NAME) as typeof policy;
    expect(policy).toBeDefined();
  });

  it('admissionPolicy.required turns the silent skip into a failed render that names --api-versions', () => {
    expect(() => renderChart(chart(), '--namespace', 'cozy-metallb-iad', '--set', 'admissionPolicy.required=true')).toThrow(
      'admissionPolicy.required is true, but this cluster does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (for helm template: --api-versions admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy)',
    );
    const required = renderChart(chart(), '--namespace', 'cozy-metallb-iad', '--set', 'admissionPolicy.required=true', '--api-versions', VAP_API);
    expect(required.filter((o) => o.kind === 'ValidatingAdmissionPolicy' && o.metadata.name === POLICY_NAME)).toHaveLength(1);
  });

  it('is rendered only where the cluster serves ValidatingAdmissionPolicy v1 (capability gate)', () => {
    const without = renderChart(chart(), '--namespace', 'cozy-metallb-iad');
    expect(without.filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy'))).toEqual([]);
    const withApi = renderChart(chart(), '--namespace', 'cozy-metallb-iad', '--api-versions', VAP_API);
    expect(withApi.filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy')).map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      `ValidatingAdmissionPolicy/${POLICY_NAME}`,
      `ValidatingAdmissionPolicy/${CLASS_POLICY_NAME}`,
      `ValidatingAdmissionPolicyBinding/${POLICY_NAME}`,
      `ValidatingAdmissionPolicyBinding/${CLASS_POLICY_NAME}`,
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
    ['create with spec.externalIPs', service('tenant-a', undefined, { type: 'ClusterIP', externalIPs: ['203.0.113.7'] }), null, TENANT, false],
    ['add an address to spec.externalIPs', service('tenant-a', undefined, { externalIPs: ['203.0.113.7', '203.0.113.8'] }), service('tenant-a', undefined, { externalIPs: ['203.0.113.7'] }), TENANT, false],
    ['keep spec.externalIPs as they were', service('tenant-a', { team: 'web' }, { externalIPs: ['203.0.113.7'] }), service('tenant-a', undefined, { externalIPs: ['203.0.113.7'] }), TENANT, true],
    ['empty spec.externalIPs', service('tenant-a', undefined, { externalIPs: [] }), null, TENANT, true],
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
    ['the adoption Job puts an admin’s pin back', service('tenant-a', pin), service('tenant-a'), ADOPTER, 'not-matched'],
    ['a ServiceAccount of that name in a tenant namespace', service('tenant-a', pin), service('tenant-a'), 'system:serviceaccount:tenant-a:metallb-iad-adopt', false],
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

  it('names who asked, the annotation, the namespace and who may when it denies', () => {
    for (const key of FENCED_ANNOTATIONS) {
      const verdict = admit(policy, { object: service('tenant-b', { [key]: 'x' }), oldObject: null, username: TENANT });
      expect(verdict).toEqual({
        matched: true,
        allowed: false,
        messages: [`${TENANT} may not set or change the annotation ${key} on Services in namespace tenant-b: only ${DEFAULT_WHO_MAY} may; ${HINT}${COPIER_HINT}`],
      });
    }
  });

  describe('a carrier of a class address served through --lb-class stays a LoadBalancer (MetalLB would never free its IP)', () => {
    const carrier = (type: string, loadBalancerClass?: string) =>
      labelled(service('tenant-a', { [CLAIM]: 'web' }, { type, ...(loadBalancerClass ? { loadBalancerClass } : {}) }), CARRIER);
    it('refuses a tenant the change of type, naming the Service, the class and what to do', () => {
      const verdict = admit(policy, { object: service('tenant-a', { [CLAIM]: 'web' }, { type: 'ClusterIP' }), oldObject: carrier('LoadBalancer', 'example.com/public'), username: TENANT });
      expect(verdict).toEqual({
        matched: true,
        allowed: false,
        messages: [
          `${TENANT} may not change Service tenant-a/web away from type LoadBalancer: it carries an address of a class whose MetalLB serves loadBalancerClass example.com/public, ` +
            'which then stops watching it and never frees the IP (MetalLB v0.16.1); delete the Service and create it anew',
        ],
      });
    });
    it.each([
      ['a Service without a loadBalancerClass (the flag-less MetalLB sees it go)', carrier('LoadBalancer'), 'ClusterIP', TENANT],
      ['a Service that carries no class address', service('tenant-a', {}, { type: 'LoadBalancer', loadBalancerClass: 'example.com/public' }), 'ClusterIP', TENANT],
      ['a type kept LoadBalancer', carrier('LoadBalancer', 'example.com/public'), 'LoadBalancer', TENANT],
      ['a trusted caller', carrier('LoadBalancer', 'example.com/public'), 'NodePort', 'admin'],
    ] as const)('lets through %s', (_what, oldObject, type, username) => {
      const object = { ...oldObject, spec: { ...oldObject.spec, type } };
      const groups = username === 'admin' ? ['system:masters'] : [];
      expect(admit(policy, { object, oldObject, username, groups })).toMatchObject({ matched: true, allowed: true });
    });
  });

  describe('a copying deputy (a tenant cluster’s cloud-controller-manager, ServiceAccount *-kccm of the namespace)', () => {
    const copied = { 'metallb.io/loadBalancerIPs': '198.51.100.9', 'metallb.universe.tf/address-pool': 'inner' };
    it('brings MetalLB’s annotations along on a Service that names a claim: the driver chooses the address there', () => {
      expect(admit(policy, { object: service('tenant-a', { [CLAIM]: 'web', ...copied }), oldObject: null, username: KCCM })).toMatchObject({ matched: true, allowed: true });
      const before = service('tenant-a', { [CLAIM]: 'web' });
      expect(admit(policy, { object: service('tenant-a', { [CLAIM]: 'web', ...copied }), oldObject: before, username: KCCM })).toMatchObject({ matched: true, allowed: true });
    });
    it.each([
      ['without a claim', 'tenant-a', { ...copied }, KCCM],
      ['with an empty claim', 'tenant-a', { [CLAIM]: '', ...copied }, KCCM],
      ['in another namespace than its own', 'tenant-b', { [CLAIM]: 'web', ...copied }, KCCM],
      ['a tenant, not a deputy, even with a claim', 'tenant-a', { [CLAIM]: 'web', ...copied }, TENANT],
      ['a ServiceAccount whose name only contains the suffix', 'tenant-a', { [CLAIM]: 'web', ...copied }, 'system:serviceaccount:tenant-a:kccm-x'],
    ] as const)('is refused %s', (_what, namespace, annotations, username) => {
      const verdict = admit(policy, { object: service(namespace, annotations), oldObject: null, username });
      expect(verdict).toMatchObject({ matched: true, allowed: false });
      expect(verdict.matched && verdict.messages[0]).toContain(`${username} may not set or change the annotation metallb.io/loadBalancerIPs on Services in namespace ${namespace}`);
    });
    it('brings no carrier label, loadBalancerIP or externalIPs along: those pin whatever the claim', () => {
      expect(admit(policy, { object: labelled(service('tenant-a', { [CLAIM]: 'web' }), CARRIER), oldObject: null, username: KCCM })).toMatchObject({ allowed: false });
      expect(admit(policy, { object: service('tenant-a', { [CLAIM]: 'web' }, { loadBalancerIP: '198.51.100.9' }), oldObject: null, username: KCCM })).toMatchObject({ allowed: false });
    });
    it('the suffixes are values: an empty list makes the deputy a tenant like any other', () => {
      const strict = renderChart(chart(), '--namespace', 'cozy-metallb-iad', '--api-versions', VAP_API, '--set-json', 'admissionPolicy.copyingDeputies.serviceAccountSuffixes=[]');
      const strictPolicy = strict.find((o) => o.kind === 'ValidatingAdmissionPolicy' && o.metadata.name === POLICY_NAME) as typeof policy;
      expect(admit(strictPolicy, { object: service('tenant-a', { [CLAIM]: 'web', ...copied }), oldObject: null, username: KCCM })).toMatchObject({ allowed: false });
    });
  });

  it('names the carrier label and the namespace when it denies', () => {
    expect(FENCED_LABELS).toEqual([CARRIER]);
    const verdict = admit(policy, { object: labelled(service('tenant-b'), CARRIER), oldObject: null, username: TENANT });
    expect(verdict).toEqual({
      matched: true,
      allowed: false,
      messages: [`${TENANT} may not set or change the label ${CARRIER} on Services in namespace tenant-b: only ${DEFAULT_WHO_MAY} may; ${HINT}`],
    });
  });

  it('names spec.loadBalancerIP when it denies', () => {
    const verdict = admit(policy, { object: service('tenant-b', undefined, { loadBalancerIP: '203.0.113.7' }), oldObject: null, username: TENANT });
    expect(verdict).toEqual({
      matched: true,
      allowed: false,
      messages: [`${TENANT} may not set or change spec.loadBalancerIP on Services in namespace tenant-b: only ${DEFAULT_WHO_MAY} may; ${HINT}`],
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
    const custom = objects.find((o) => o.kind === 'ValidatingAdmissionPolicy' && o.metadata.name === POLICY_NAME) as typeof policy;
    const request = { object: service('tenant-a', pin), oldObject: null };
    expect(admit(custom, { ...request, username: 'system:serviceaccount:iad:driver' }).matched).toBe(false);
    expect(admit(custom, { ...request, username: DRIVER })).toMatchObject({ matched: true, allowed: false });
  });
});

/** A principal as the apiserver authenticates it. */
interface Principal {
  readonly username: string;
  readonly groups: readonly string[];
}
const serviceAccount = (namespace: string, name: string): Principal => ({
  username: `system:serviceaccount:${namespace}:${name}`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
});
const user = (username: string, ...groups: string[]): Principal => ({ username, groups: [...groups, 'system:authenticated'] });

const MIGRATION_HOOK = serviceAccount('cozy-system', 'cozystack-migration-hook');
const CLUSTER_ADMIN = user('kubernetes-admin', 'system:masters');
const ARGO_CONTROLLER = serviceAccount('argocd', 'argocd-application-controller');
const OPS = user('ops@example.org', 'ops');

/** Cozystack's trustedCaller set, restated: the default must follow it exactly. */
const DEFAULT_TRUSTED: [string, Principal][] = [
  ['system:masters', CLUSTER_ADMIN],
  ['system:serviceaccounts:cozy-system', MIGRATION_HOOK],
  ['system:serviceaccounts:cozy-cert-manager', serviceAccount('cozy-cert-manager', 'cert-manager')],
  ['system:serviceaccounts:cozy-fluxcd', serviceAccount('cozy-fluxcd', 'helm-controller')],
  ['system:serviceaccounts:kube-system', serviceAccount('kube-system', 'generic-garbage-collector')],
];

const NOT_TRUSTED: [string, Principal][] = [
  ['a tenant user', user('alice', 'tenant-a-admin')],
  ['a tenant ServiceAccount', serviceAccount('tenant-a', 'deployer')],
  ['a ServiceAccount of another cozy-* namespace', serviceAccount('cozy-monitoring', 'vmagent')],
  ["a ServiceAccount of the driver's namespace that is not the driver", serviceAccount('cozy-metallb-iad', 'other')],
  ['a user whose name spells a trusted group (groups are compared as groups)', user('system:masters')],
  ['a user with no groups at all', { username: 'nobody', groups: [] }],
];

/** The writes a trusted caller makes in the real tree: a legacy pin (migration 29), spec.loadBalancerIP (the gateway README), the carrier label. */
const WRITES: [string, unknown, unknown][] = [
  ['create with metallb.universe.tf/loadBalancerIPs', service('tenant-a', { 'metallb.universe.tf/loadBalancerIPs': '203.0.113.7' }), null],
  ['create with spec.loadBalancerIP', service('tenant-a', undefined, { loadBalancerIP: '203.0.113.7' }), null],
  ['change a pin', service('tenant-a', { 'metallb.io/loadBalancerIPs': '203.0.113.8' }), service('tenant-a', { 'metallb.io/loadBalancerIPs': '203.0.113.7' })],
  ['introduce the carrier label', labelled(service('tenant-a'), CARRIER), service('tenant-a')],
];

const policyOf = (...args: string[]) =>
  renderChart(chart(), '--namespace', 'cozy-metallb-iad', '--api-versions', VAP_API, ...args).find((o) => o.kind === 'ValidatingAdmissionPolicy' && o.metadata.name === POLICY_NAME) as KubeObject & {
    spec: { variables: { name: string; expression: string }[]; validations: { expression: string }[] };
  };
const valuesFile = (values: unknown) => {
  const file = join(mkdtempSync(join(tmpdir(), 'fence-values-')), 'values.yaml');
  writeFileSync(file, stringify(values));
  return file;
};
const verdicts = (policy: ReturnType<typeof policyOf>, principal: Principal) =>
  WRITES.map(([what, object, oldObject]) => [what, admit(policy, { object, oldObject, ...principal })] as const);

describe('who besides the driver may pin: admissionPolicy.trustedCallers', () => {
  let policy: ReturnType<typeof policyOf>;
  beforeAll(() => {
    policy = policyOf();
  });

  it("defaults to Cozystack's trustedCaller set exactly: five groups, no usernames, no ServiceAccounts", () => {
    expect([...COZYSTACK_TRUSTED_GROUPS]).toEqual(DEFAULT_TRUSTED.map(([group]) => group));
    const variable = (name: string) => policy.spec.variables.find((v) => v.name === name)?.expression;
    expect(variable('trustedGroups')).toBe(JSON.stringify(DEFAULT_TRUSTED.map(([group]) => group)));
    expect(variable('trustedUsernames')).toBe('[] + dyn([]).map(sa, "system:serviceaccount:" + sa.namespace + ":" + sa.name)');
  });

  it.each(DEFAULT_TRUSTED)('a member of %s is admitted by default', (_group, principal) => {
    for (const [what, verdict] of verdicts(policy, principal)) {
      expect(verdict, what).toMatchObject({ matched: true, allowed: true });
    }
  });

  it.each(NOT_TRUSTED)('%s is refused by default, named in the message', (_name, principal) => {
    for (const [what, verdict] of verdicts(policy, principal)) {
      expect(verdict, what).toMatchObject({ matched: true, allowed: false });
      const messages = (verdict as { messages: string[] }).messages;
      expect(messages).toHaveLength(1);
      expect(messages[0]!.startsWith(`${principal.username} may not set or change `), what).toBe(true);
      expect(messages[0], what).toContain(`: only ${DEFAULT_WHO_MAY} may; `);
    }
  });

  it('narrowed through values (system:masters dropped): a cluster admin is refused, the platform ServiceAccounts still admitted', () => {
    const narrowed = DEFAULT_TRUSTED.map(([group]) => group).filter((g) => g !== 'system:masters');
    const custom = policyOf('--set', `admissionPolicy.trustedCallers.groups={${narrowed.join(',')}}`);
    for (const [what, verdict] of verdicts(custom, CLUSTER_ADMIN)) {
      expect(verdict, what).toMatchObject({ matched: true, allowed: false });
      expect((verdict as { messages: string[] }).messages[0], what).toMatch(
        new RegExp(`^kubernetes-admin may not .*\\(users: none; groups: ${narrowed.join(', ')}\\) may; `),
      );
    }
    for (const [what, verdict] of verdicts(custom, MIGRATION_HOOK)) {
      expect(verdict, what).toMatchObject({ matched: true, allowed: true });
    }
  });

  it('widened through values (an Argo CD ServiceAccount, a username): those are admitted, a neighbour of theirs is not', () => {
    const custom = policyOf(
      '-f',
      valuesFile({ admissionPolicy: { trustedCallers: { usernames: ['ops@example.org'], serviceAccounts: [{ namespace: 'argocd', name: 'argocd-application-controller' }] } } }),
    );
    for (const principal of [ARGO_CONTROLLER, OPS, CLUSTER_ADMIN]) {
      for (const [what, verdict] of verdicts(custom, principal)) {
        expect(verdict, `${principal.username}: ${what}`).toMatchObject({ matched: true, allowed: true });
      }
    }
    const refused = verdicts(custom, serviceAccount('argocd', 'argocd-server'))[0]![1];
    expect(refused).toMatchObject({ matched: true, allowed: false });
    expect((refused as { messages: string[] }).messages[0]).toContain(
      '(users: ops@example.org, system:serviceaccount:argocd:argocd-application-controller; groups: system:masters, ',
    );
  });

  it('escapes what values carry: a username with quotes and angle brackets is one CEL string, compared exactly', () => {
    const odd = 'o"dd<user>\\x';
    const custom = policyOf('-f', valuesFile({ admissionPolicy: { trustedCallers: { usernames: [odd], groups: [] } } }));
    expect(verdicts(custom, user(odd))[0]![1]).toMatchObject({ matched: true, allowed: true });
    const refused = verdicts(custom, CLUSTER_ADMIN)[0]![1];
    expect((refused as { messages: string[] }).messages[0]).toContain(`(users: ${odd}; groups: none) may`);
  });

  // Each pattern names the key as both helm and synth word it (their messages differ).
  const MALFORMED: [string, unknown, RegExp][] = [
    ['a wrong type', { groups: 'system:masters' }, /admissionPolicy[./]trustedCallers[./]groups\W.*array/],
    ['an unknown key', { users: ['alice'] }, /admissionPolicy[./]trustedCallers\W.*users/],
    ['an empty string', { groups: [''] }, /admissionPolicy[./]trustedCallers[./]groups[./]0\W/],
    ['blanks around a name', { usernames: [' alice'] }, /admissionPolicy[./]trustedCallers[./]usernames[./]0\W.*pattern/],
    ['a ServiceAccount without namespace', { serviceAccounts: [{ name: 'argocd-application-controller' }] }, /admissionPolicy[./]trustedCallers[./]serviceAccounts[./]0\W.*namespace/],
    ['a ServiceAccount with an unknown key', { serviceAccounts: [{ namespace: 'argocd', name: 'x', kind: 'User' }] }, /admissionPolicy[./]trustedCallers[./]serviceAccounts[./]0\W.*kind/],
  ];

  it.each(MALFORMED)('helm refuses %s, naming the key', (_name, trustedCallers, message) => {
    const result = helm('template', 'release', chart(), '--namespace', 'cozy-metallb-iad', '-f', valuesFile({ admissionPolicy: { trustedCallers } }));
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(message);
  });

  it.each(MALFORMED)('synth refuses %s, naming the key', (_name, trustedCallers, message) => {
    const file = valuesFile({ 'cozy-metallb-iad': { admissionPolicy: { trustedCallers } } });
    expect(() => synthesize({ valuesFiles: [file] })).toThrow(new RegExp(`^${file}: cozy-metallb-iad\\.${message.source}`));
  });
});
