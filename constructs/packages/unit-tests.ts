/**
 * The helm-unittest suites each package ships under tests/, run by its
 * `make test` (and so by Cozystack's hack/helm-unit-tests.sh sweep). They are
 * written from the same constants the templates are, with the values the package
 * was synthesized with, so an override moves the expectation with the output.
 */
import { FENCE_VALIDATIONS, FENCED_RESOURCES, POLICY_NAME, TENANT_NAMESPACE_CONDITION } from './metallb-address-policy.js';
import { TENANT_AGGREGATION_PREFIX, TENANT_ROLES, tenantRoleRules } from './tenant-roles.js';
import type { UnitTestSuite } from './unit-test-suite.js';

export interface Release {
  readonly name: string;
  readonly namespace: string;
}

/** The API the fence needs: GA in admissionregistration.k8s.io/v1 from Kubernetes 1.30. */
export const VAP_API = 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy';

/**
 * A `_cluster` map of the shape the platform's `cozystack-values` Secret carries
 * (packages/core/platform/templates/apps.yaml); the operator layers it under
 * every HelmRelease, so each suite renders with it.
 */
export const OPERATOR_VALUES = {
  _cluster: {
    'root-host': 'example.org',
    'bundle-name': 'isp-full',
    solver: 'http01',
    'issuer-name': 'letsencrypt-prod',
  },
} as const;

/** The image of a vendored controller chart's values. */
interface ControllerValues {
  readonly image?: { readonly repository?: string; readonly tag?: string };
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function tenantRoleSuite(release: Release): UnitTestSuite {
  return {
    suite: 'tenant access to IP address claims aggregates into the cozy:tenant roles',
    templates: ['templates/tenant-clusterroles.yaml'],
    release,
    tests: [
      { it: 'renders one ClusterRole per cozy:tenant role it feeds', asserts: [{ hasDocuments: { count: TENANT_ROLES.length } }] },
      ...TENANT_ROLES.map((role) => ({
        it: `${role.name} carries only the ${role.aggregateTo} label and grants ${role.verbs.join(', ')} on ipaddressclaims${tenantRoleRules(role).length > 1 ? ', and get on its own namespace' : ''}`,
        documentSelector: { path: 'metadata.name', value: role.name },
        asserts: [
          { isKind: { of: 'ClusterRole' } },
          { equal: { path: 'metadata.labels', value: { [`${TENANT_AGGREGATION_PREFIX}/${role.aggregateTo}`]: 'true' } } },
          // Cluster-scoped IPAddress and IPAddressClass never reach a tenant through these roles.
          { equal: { path: 'rules', value: tenantRoleRules(role) } },
        ],
      })),
    ],
  };
}

/**
 * The vendored controller as Cozystack's operator installs it: `_cluster` at
 * the root is accepted, the keys the package owns still refuse a wrong type or
 * an unknown key, the image is digest-pinned, and `args` carries what the
 * package's values say.
 */
export function operatorInstallSuite(
  chart: string,
  values: unknown,
  release: Release,
  expectedArgs: readonly string[],
): UnitTestSuite {
  const image = (values as ControllerValues).image;
  const ref = `${image?.repository}:${image?.tag}`;
  const container = 'spec.template.spec.containers[0]';
  return {
    suite: `${chart} installed with the operator's cozystack-values`,
    templates: [`charts/${chart}/templates/deployment.yaml`],
    release,
    set: OPERATOR_VALUES,
    tests: [
      {
        it: 'accepts the _cluster map the operator injects at the root and installs into the release namespace',
        asserts: [{ isKind: { of: 'Deployment' } }, { equal: { path: 'metadata.namespace', value: release.namespace } }],
      },
      {
        it: 'pins the controller image by tag and digest, outside the platform registry that promotion retags',
        asserts: [
          { equal: { path: `${container}.image`, value: ref } },
          { matchRegex: { path: `${container}.image`, pattern: '^ghcr\\.io/cozystack/[a-z0-9-]+:[0-9][^@]*@sha256:[0-9a-f]{64}$' } },
        ],
      },
      ...expectedArgs.map((arg) => ({
        it: `passes ${arg} from the package values`,
        asserts: [{ contains: { path: `${container}.args`, content: arg } }],
      })),
      {
        it: 'refuses a wrong type inside the keys the package owns',
        set: { [`${chart}.controller.replicas`]: 'two' },
        // helm 3 and helm-unittest word schema errors differently; both name the chart and the field.
        asserts: [{ failedTemplate: { errorPattern: `${escapeRegex(chart)}:[\\s\\S]*controller[./]replicas` } }],
      },
      {
        it: 'refuses an unknown key inside the keys the package owns',
        set: { [`${chart}.controller.replica`]: 2 },
        asserts: [{ failedTemplate: { errorPattern: "(?i)additional propert(y|ies) '?replica'? (is )?not allowed" } }],
      },
      {
        it: 'refuses an image tag without a digest',
        set: { [`${chart}.image.tag`]: '1.0.0' },
        asserts: [{ failedTemplate: { errorPattern: '(?i)image[./]tag.*does not match pattern' } }],
      },
    ],
  };
}

export interface FenceExpectation {
  /** `system:serviceaccount:<ns>:<name>` of the driver as the package's values render it. */
  readonly driverNamespace: string;
  readonly driverServiceAccount: string;
  /** The adoption Job's ServiceAccount, in the release namespace. */
  readonly adopterServiceAccount: string;
  /** `admissionPolicy.trustedCallers` as the package was synthesized with. */
  readonly trustedCallers: {
    readonly usernames: readonly string[];
    readonly groups: readonly string[];
    readonly serviceAccounts: readonly { readonly namespace: string; readonly name: string }[];
  };
}

/** The trustedUsernames variable as helm renders it from these lists (toJson: keys sorted, no spaces). */
function trustedUsernamesExpression(usernames: readonly string[], serviceAccounts: FenceExpectation['trustedCallers']['serviceAccounts']): string {
  const accounts = serviceAccounts.map((sa) => ({ name: sa.name, namespace: sa.namespace }));
  return `${JSON.stringify(usernames)} + dyn(${JSON.stringify(accounts)}).map(sa, "system:serviceaccount:" + sa.namespace + ":" + sa.name)`;
}

/** The fence, with the ValidatingAdmissionPolicy API served. */
export function fenceSuite(release: Release, driver: FenceExpectation): UnitTestSuite {
  const policy = { path: 'kind', value: 'ValidatingAdmissionPolicy' };
  const driverExpression = (ns: string, sa: string) => `request.userInfo.username != "system:serviceaccount:${ns}:${sa}"`;
  return {
    suite: 'the fence around MetalLB address annotations, where ValidatingAdmissionPolicy is served',
    templates: ['templates/metallb-address-policy.yaml'],
    release,
    set: OPERATOR_VALUES,
    capabilities: { apiVersions: [VAP_API] },
    tests: [
      { it: 'renders the policy and its Deny binding', asserts: [{ hasDocuments: { count: 2 } }] },
      {
        it: 'is scoped to tenant namespaces, on the Service and its status subresource',
        documentSelector: policy,
        asserts: [
          { equal: { path: 'metadata.name', value: POLICY_NAME } },
          { contains: { path: 'spec.matchConditions', content: TENANT_NAMESPACE_CONDITION } },
          {
            equal: {
              path: 'spec.matchConstraints.resourceRules[0]',
              value: { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: [...FENCED_RESOURCES] },
            },
          },
        ],
      },
      {
        it: 'exempts the driver ServiceAccount before any validation',
        documentSelector: policy,
        asserts: [
          {
            contains: {
              path: 'spec.matchConditions',
              content: { name: 'not-the-driver', expression: driverExpression(driver.driverNamespace, driver.driverServiceAccount) },
            },
          },
        ],
      },
      {
        it: 'exempts the adoption Job of the release, whose undo puts back an admin’s pins',
        documentSelector: policy,
        asserts: [
          {
            contains: {
              path: 'spec.matchConditions',
              content: { name: 'not-the-adopter', expression: driverExpression(release.namespace, driver.adopterServiceAccount) },
            },
          },
        ],
      },
      {
        it: 'follows the driver ServiceAccount the values name',
        documentSelector: policy,
        set: { 'admissionPolicy.driverServiceAccount': { namespace: 'cozy-lb', name: 'driver' } },
        asserts: [
          { contains: { path: 'spec.matchConditions', content: { name: 'not-the-driver', expression: driverExpression('cozy-lb', 'driver') } } },
        ],
      },
      ...FENCE_VALIDATIONS.map((validation, index) => ({
        it: `compares old and new value unless a trusted caller asks: ${validation.messageExpression.match(/may not set or change (the annotation |the label )?(\S+)/)?.[2]}`,
        documentSelector: policy,
        asserts: [{ equal: { path: `spec.validations[${index}]`, value: validation } }],
      })),
      {
        it: 'denies, not only warns or audits',
        documentSelector: { path: 'kind', value: 'ValidatingAdmissionPolicyBinding' },
        asserts: [
          { equal: { path: 'spec.policyName', value: POLICY_NAME } },
          { equal: { path: 'spec.validationActions', value: ['Deny'] } },
        ],
      },
    ],
  };
}

/**
 * The allowlist: who besides the driver may set or change the fenced keys. It
 * renders into CEL variables each validation reads; values narrow or widen it,
 * and the schema refuses a malformed entry naming the key.
 */
export function fenceAllowlistSuite(release: Release, driver: FenceExpectation): UnitTestSuite {
  const policy = { path: 'kind', value: 'ValidatingAdmissionPolicy' };
  const { usernames, groups, serviceAccounts } = driver.trustedCallers;
  const variable = (name: string, expression: string) => ({ contains: { path: 'spec.variables', content: { name, expression } } });
  const narrowed = groups.filter((g) => g !== 'system:masters');
  const argo = { namespace: 'argocd', name: 'argocd-application-controller' };
  const refused = (it: string, set: Record<string, unknown>, pattern: string) => ({ it, set, asserts: [{ failedTemplate: { errorPattern: pattern } }] });
  return {
    suite: 'who besides the driver may pin: admissionPolicy.trustedCallers',
    templates: ['templates/metallb-address-policy.yaml'],
    release,
    set: OPERATOR_VALUES,
    capabilities: { apiVersions: [VAP_API] },
    tests: [
      {
        it: `trusts the groups ${groups.join(', ') || '(none)'} and the users ${[...usernames, ...serviceAccounts.map((sa) => `${sa.namespace}/${sa.name}`)].join(', ') || '(none)'}`,
        documentSelector: policy,
        asserts: [
          variable('trustedGroups', JSON.stringify(groups)),
          variable('trustedUsernames', trustedUsernamesExpression(usernames, serviceAccounts)),
          variable(
            'trustedCaller',
            'request.userInfo.username in variables.trustedUsernames || (has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in variables.trustedGroups))',
          ),
        ],
      },
      {
        it: 'narrows: system:masters dropped from the groups',
        documentSelector: policy,
        set: { 'admissionPolicy.trustedCallers.groups': narrowed },
        asserts: [variable('trustedGroups', JSON.stringify(narrowed))],
      },
      {
        it: 'widens: an Argo CD ServiceAccount and a username',
        documentSelector: policy,
        set: { 'admissionPolicy.trustedCallers.serviceAccounts': [argo], 'admissionPolicy.trustedCallers.usernames': ['ops@example.org'] },
        asserts: [variable('trustedUsernames', trustedUsernamesExpression(['ops@example.org'], [argo]))],
      },
      // helm 3 and helm-unittest word schema errors differently; each pattern names the key either way.
      refused('refuses a list of the wrong type', { 'admissionPolicy.trustedCallers.groups': 'system:masters' }, 'admissionPolicy[./]trustedCallers[./]groups'),
      refused('refuses an unknown key', { 'admissionPolicy.trustedCallers.users': ['alice'] }, 'admissionPolicy[./]trustedCallers[\\s\\S]*users'),
      refused('refuses an empty group', { 'admissionPolicy.trustedCallers.groups': [''] }, 'admissionPolicy[./]trustedCallers[./]groups[./]0'),
      refused(
        'refuses a ServiceAccount without namespace',
        { 'admissionPolicy.trustedCallers.serviceAccounts': [{ name: argo.name }] },
        'admissionPolicy[./]trustedCallers[./]serviceAccounts[./]0[\\s\\S]*namespace',
      ),
    ],
  };
}

/** The capability gate: per-test capabilities merge with a suite's, so the absent API gets its own suite. */
/** admissionPolicy.required turns the silent skip into a failed render. */
export function fenceRequiredSuite(release: Release): UnitTestSuite {
  return {
    suite: 'admissionPolicy.required refuses a render without the fence',
    templates: ['templates/metallb-address-policy-required.yaml'],
    release,
    set: { ...OPERATOR_VALUES, 'admissionPolicy.required': true },
    capabilities: { apiVersions: [] },
    tests: [
      {
        it: 'fails naming the API and the --api-versions flag',
        asserts: [{ failedTemplate: { errorPattern: 'admissionPolicy.required is true, but this cluster does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy' } }],
      },
    ],
  };
}

/** NOTES.txt warns when the fence is not rendered, and only then. */
export function fenceNotesSuites(release: Release): UnitTestSuite[] {
  const warning = 'WARNING: this cluster does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy';
  return [
    {
      suite: 'NOTES.txt warns when the fence cannot be rendered',
      templates: ['templates/NOTES.txt'],
      release,
      set: OPERATOR_VALUES,
      capabilities: { apiVersions: [] },
      tests: [{ it: 'names the missing API and admissionPolicy.required', asserts: [{ matchRegexRaw: { pattern: `${warning}.*admissionPolicy.required=true` } }] }],
    },
    {
      suite: 'NOTES.txt is quiet where the fence renders',
      templates: ['templates/NOTES.txt'],
      release,
      set: OPERATOR_VALUES,
      capabilities: { apiVersions: [VAP_API] },
      tests: [{ it: 'has no warning', asserts: [{ notMatchRegexRaw: { pattern: 'WARNING' } }] }],
    },
  ];
}

export function fenceGateSuite(release: Release): UnitTestSuite {
  return notRenderedWithoutVap(release, 'templates/metallb-address-policy.yaml', 'the fence is not rendered where ValidatingAdmissionPolicy is not served');
}

/** A policy template renders nothing on a cluster that does not serve ValidatingAdmissionPolicy. */
function notRenderedWithoutVap(release: Release, template: string, suite: string): UnitTestSuite {
  return {
    suite,
    templates: [template],
    release,
    set: OPERATOR_VALUES,
    capabilities: { apiVersions: [] },
    tests: [{ it: 'renders nothing without admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy', asserts: [{ hasDocuments: { count: 0 } }] }],
  };
}

/** What the adoption Job is expected to render with, from the values the package was synthesized with. */
export interface AdoptionExpectation {
  /** The vendored driver chart. */
  readonly chart: string;
  /** Its ServiceAccount, roles and Job. */
  readonly adopter: string;
  readonly image: string;
  readonly metallbNamespace: string;
  /** The ClusterRole's and the pool Role's rules as rendered. */
  readonly clusterRules: readonly unknown[];
  readonly poolRules: readonly unknown[];
}

/** The opt-in adoption Job (constructs/charts/adoption-job.ts): off by default, its arguments from values, its least RBAC. */
export function adoptionJobSuite(release: Release, expected: AdoptionExpectation): UnitTestSuite {
  const key = (k: string) => `${expected.chart}.adoption.${k}`;
  const adopt = { [key('enabled')]: true, [key('className')]: 'legacy', [key('pool')]: 'legacy' };
  const job = { path: 'kind', value: 'Job' };
  const args = 'spec.template.spec.containers[0].args';
  const has = (content: string) => ({ contains: { path: args, content } });
  const lacks = (content: string) => ({ not: true as const, contains: { path: args, content } });
  return {
    suite: 'adoption by a Job, opt-in (adoption.*)',
    templates: [`charts/${expected.chart}/templates/adoption.yaml`],
    release,
    set: OPERATOR_VALUES,
    tests: [
      { it: 'renders nothing unless enabled', asserts: [{ hasDocuments: { count: 0 } }] },
      {
        it: 'enabled: a ServiceAccount, a ClusterRole and a Role with their bindings, and the Job',
        set: { ...adopt, [key('all')]: true },
        asserts: [{ hasDocuments: { count: 6 } }],
      },
      {
        it: 'runs after install and every upgrade as a hook, the last run kept for its log',
        set: { ...adopt, [key('all')]: true },
        documentSelector: job,
        asserts: [
          { equal: { path: 'metadata.annotations["helm.sh/hook"]', value: 'post-install,post-upgrade' } },
          { equal: { path: 'metadata.annotations["helm.sh/hook-delete-policy"]', value: 'before-hook-creation' } },
          { equal: { path: 'spec.template.spec.serviceAccountName', value: expected.adopter } },
          { equal: { path: 'spec.template.spec.containers[0].image', value: expected.image } },
          { equal: { path: 'spec.template.spec.restartPolicy', value: 'Never' } },
        ],
      },
      {
        it: "runs the driver image's adopt subcommand with the values as flags",
        set: { ...adopt, [key('all')]: true },
        documentSelector: job,
        asserts: [
          { equal: { path: `${args}[0]`, value: 'adopt' } },
          has('--class=legacy'),
          has('--pool=legacy'),
          has('--all'),
          has(`--metallb-namespace=${expected.metallbNamespace}`),
          has('--timeout=120'),
          lacks('--undo'),
          lacks('--dry-run'),
        ],
      },
      {
        it: 'passes namespaces and Services comma-separated',
        set: { ...adopt, [key('namespaces')]: ['tenant-a', 'tenant-b'], [key('services')]: ['tenant-c/web'] },
        documentSelector: job,
        asserts: [has('--namespace=tenant-a,tenant-b'), has('--service=tenant-c/web'), lacks('--all')],
      },
      {
        it: 'undo: the class alone',
        set: { [key('enabled')]: true, [key('className')]: 'legacy', [key('undo')]: true },
        documentSelector: job,
        asserts: [has('--undo'), has('--class=legacy'), { not: true, contains: { path: args, content: '--pool=legacy' } }],
      },
      {
        it: 'grants only what adoption reads and writes; the pools only in MetalLB’s namespace',
        set: { ...adopt, [key('all')]: true },
        documentSelector: { path: 'kind', value: 'ClusterRole' },
        asserts: [{ equal: { path: 'rules', value: expected.clusterRules } }],
      },
      {
        it: 'reads the admin’s pools in MetalLB’s namespace only',
        set: { ...adopt, [key('all')]: true },
        documentSelector: { path: 'kind', value: 'Role' },
        asserts: [
          { equal: { path: 'metadata.namespace', value: expected.metallbNamespace } },
          { equal: { path: 'rules', value: expected.poolRules } },
        ],
      },
      {
        it: 'refuses enabled without a class',
        set: { [key('enabled')]: true, [key('pool')]: 'legacy', [key('all')]: true },
        asserts: [{ failedTemplate: { errorPattern: 'adoption[./]className' } }],
      },
      {
        it: 'refuses an adoption that selects no Service',
        set: adopt,
        asserts: [{ failedTemplate: { errorPattern: 'adoption[./](namespaces|services)' } }],
      },
      {
        it: 'refuses a Service not given as namespace/name',
        set: { ...adopt, [key('services')]: ['web'] },
        asserts: [{ failedTemplate: { errorPattern: 'adoption[./]services[./]0' } }],
      },
    ],
  };
}

/**
 * Who may draw from which class (constructs/packages/class-access-policy.ts, docs/access.md):
 * the policy only where ValidatingAdmissionPolicy is served, bound with every class as its
 * parameter; the class readers' binding on by default, off through values.
 */
export function classAccessSuites(release: Release, policyName: string, readerRole: string): UnitTestSuite[] {
  return [
    {
      suite: 'the class-access policy takes every class as its parameter, where ValidatingAdmissionPolicy is served',
      templates: ['templates/class-access-policy.yaml'],
      release,
      set: OPERATOR_VALUES,
      capabilities: { apiVersions: [VAP_API] },
      tests: [
        { it: 'renders the policy and its binding', asserts: [{ hasDocuments: { count: 2 } }] },
        {
          it: 'the policy reads IPAddressClass parameters and judges claims on create and update',
          documentSelector: { path: 'kind', value: 'ValidatingAdmissionPolicy' },
          asserts: [
            { equal: { path: 'metadata.name', value: policyName } },
            { equal: { path: 'spec.paramKind', value: { apiVersion: 'local.sdn.cozystack.io/v1alpha1', kind: 'IPAddressClass' } } },
            { equal: { path: 'spec.matchConstraints.resourceRules[0].resources', value: ['ipaddressclaims'] } },
          ],
        },
        {
          it: 'the binding denies, with every class selected and a missing one admitted',
          documentSelector: { path: 'kind', value: 'ValidatingAdmissionPolicyBinding' },
          asserts: [
            { equal: { path: 'spec.paramRef', value: { selector: {}, parameterNotFoundAction: 'Allow' } } },
            { equal: { path: 'spec.validationActions', value: ['Deny'] } },
          ],
        },
      ],
    },
    notRenderedWithoutVap(release, 'templates/class-access-policy.yaml', 'the class-access policy is not rendered where ValidatingAdmissionPolicy is not served'),
    {
      suite: 'every authenticated user reads classes, unless values say otherwise',
      templates: ['templates/class-reader-binding.yaml'],
      release,
      set: OPERATOR_VALUES,
      tests: [
        {
          it: `binds ${readerRole} to system:authenticated by default`,
          asserts: [
            { hasDocuments: { count: 1 } },
            { equal: { path: 'roleRef.name', value: readerRole } },
            { equal: { path: 'subjects', value: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }] } },
          ],
        },
        { it: 'renders nothing with classAccess.tenantsReadClasses=false', set: { 'classAccess.tenantsReadClasses': false }, asserts: [{ hasDocuments: { count: 0 } }] },
      ],
    },
  ];
}
