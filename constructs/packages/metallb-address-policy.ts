/**
 * The fence around MetalLB's own address annotations (docs/packaging.md
 * style): in `tenant-*` namespaces nobody but the metallb-iad driver and the
 * trusted callers the wrapper's values list (`admissionPolicy.trustedCallers`)
 * may introduce or change an annotation (or field) that makes MetalLB hand a
 * Service a specific address or pool, or share one. Tenants ask for an address through
 * `local.sdn.cozystack.io/ip-address-claim` instead.
 *
 * The trusted callers are the platform's own principals (by default Cozystack's
 * `trustedCaller` set: cluster admins and the cozy-system, cozy-cert-manager,
 * cozy-fluxcd and kube-system ServiceAccounts), which write pins on tenants'
 * behalf: a migration creating tenant Services, Flux applying a tenant's
 * release, an admin pre-creating a Service. Refusing them breaks the platform;
 * what an allowlisted principal pins is still refused by MetalLB when the
 * address belongs to a class (its pool admits only the driver's carriers).
 *
 * The driver's carrier label is fenced alike: its pools admit only Services
 * that carry it.
 *
 * Removing a fenced annotation or label stays allowed: dropping a pin never grants an
 * address, only gives one up (the driver re-pins while the claim annotation
 * stays), and refusing it would break `kubectl replace` of a tenant's own manifest.
 * An unchanged value always passes, so a tenant can still edit the rest of a
 * Service the driver pinned.
 */
import { Construct } from 'constructs';
import { IP_ADDRESS_CLAIM_ANNOTATION, METALLB_ADDRESS_ANNOTATIONS, METALLB_CARRIER_LABEL, METALLB_SHARING_ANNOTATIONS } from '../../api/v1alpha1/well-known.js';
import { Helm, Pipeline, Release, type HelmOperand } from '../helm/expr.js';
import { cel, denyingPolicy } from './admission-policy.js';
import { trustedCallersText, trustedCallerVariables, type TrustedCallerOperands } from './trusted-callers.js';

export const POLICY_NAME = 'cozystack-metallb-address-policy';

/**
 * MetalLB's address-choosing annotations and its sharing key (api/v1alpha1/well-known.ts says
 * why both spellings): a sharing key lets a Service join an IP that Services with the same key
 * already hold.
 */
export const FENCED_ANNOTATIONS = [...METALLB_ADDRESS_ANNOTATIONS, ...METALLB_SHARING_ANNOTATIONS] as const;

/**
 * Every way Service metadata is written. The status strategy resets `spec` but
 * keeps `metadata`, so an annotation sent through `services/status` is stored
 * like one sent to the Service itself (the apiserver's Service registry has no
 * other subresource that writes the object: proxy only forwards).
 */
export const FENCED_RESOURCES = ['services', 'services/status'] as const;

/**
 * Labels that make MetalLB hand a Service an address: the driver's pools
 * admit only Services with the carrier label (`serviceAllocation`), so a
 * tenant who could set it could ask one of those pools for an IP.
 */
export const FENCED_LABELS = [METALLB_CARRIER_LABEL] as const;

/**
 * The policy's validations: a fenced key may only keep its old value (or go
 * away), unless a trusted caller asks. The allowlist is the CEL variable
 * `trustedCaller` each validation ORs in, as Cozystack's own policies do,
 * rather than a matchCondition: matchConditions cannot read variables, so the
 * list would be restated there and again for the message; as a variable it is
 * written once, evaluated (lazily) only when a fenced key actually changes, and
 * the same variables say who may in the refusal. The driver's exemption stays a
 * matchCondition: the driver never reaches the validations at all.
 */
export const FENCE_VALIDATIONS: readonly { expression: string; messageExpression: string; reason: 'Forbidden' }[] = [
  ...FENCED_ANNOTATIONS.map((key) => ({ ...keptOnly('annotation', key, 'variables.copiedForClaim'), messageExpression: refusal(`the annotation ${key}`, copierHint()) })),
  ...FENCED_LABELS.map((key) => keptOnly('label', key)),
  {
    expression:
      '(variables.loadBalancerIP == "" || variables.loadBalancerIP == variables.oldLoadBalancerIP) || variables.trustedCaller',
    messageExpression: refusal('spec.loadBalancerIP'),
    reason: 'Forbidden',
  },
  {
    // MetalLB v0.16.1 started with --lb-class filters Services by class before it looks at them
    // (internal/k8s/controllers/service_controller.go, filterByLoadBalancerClass), and the
    // apiserver drops spec.loadBalancerClass with the type: a carrier of a class address that
    // stops being a LoadBalancer is never seen again, so its IP is never freed and the address's
    // hold is refused ("in use") until that MetalLB restarts. Delete and create instead.
    expression:
      `oldObject == null || object.spec.type == "LoadBalancer" || oldObject.spec.type != "LoadBalancer" || ` +
      `!has(oldObject.spec.loadBalancerClass) || !(${cel(METALLB_CARRIER_LABEL)} in variables.oldLabels) || variables.trustedCaller`,
    messageExpression:
      `request.userInfo.username + ${cel(' may not change Service ')} + object.metadata.namespace + "/" + object.metadata.name + ` +
      `${cel(' away from type LoadBalancer: it carries an address of a class whose MetalLB serves loadBalancerClass ')} + oldObject.spec.loadBalancerClass + ` +
      `${cel(', which then stops watching it and never frees the IP (MetalLB v0.16.1); delete the Service and create it anew')}`,
    reason: 'Forbidden',
  },
  {
    // kube-proxy programs a Service's externalIPs on every node whatever MetalLB assigned, so a
    // tenant listing another tenant's attached address there takes its traffic (the data-plane
    // e2e measured it): as much a pin as loadBalancerIP.
    expression: '(size(variables.externalIPs) == 0 || variables.externalIPs == variables.oldExternalIPs) || variables.trustedCaller',
    messageExpression: refusal('spec.externalIPs'),
    reason: 'Forbidden',
  },
];

/**
 * A metadata key that may only keep its old value, or go away, unless a trusted caller asks (or
 * `exempt`, a CEL variable, holds).
 */
function keptOnly(what: 'annotation' | 'label', key: string, exempt?: string) {
  const [now, before] = what === 'annotation' ? ['variables.annotations', 'variables.oldAnnotations'] : ['variables.labels', 'variables.oldLabels'];
  return {
    expression:
      `(!(${cel(key)} in ${now}) || (${cel(key)} in ${before} && ${before}[${cel(key)}] == ${now}[${cel(key)}]))` +
      ' || variables.trustedCaller' +
      (exempt ? ` || ${exempt}` : ''),
    messageExpression: refusal(`the ${what} ${key}`),
    reason: 'Forbidden' as const,
  };
}

/** The refusal: who asked, what, where, and who may (from the same variables the check reads). */
function refusal(what: string, more = ''): string {
  return (
    `request.userInfo.username + ${cel(` may not set or change ${what} on Services in namespace `)} + object.metadata.namespace + ` +
    `": only " + variables.whoMay + ${cel(` may${hint()}${more}`)}`
  );
}

/** What a copying deputy is told: the same keys pass on a Service that names a claim. */
function copierHint(): string {
  return ' (a copying deputy, admissionPolicy.copyingDeputies, may bring it along on a Service that carries that annotation: the driver then chooses the address)';
}

/**
 * Deputies that copy annotations they do not author onto Services in their own namespace: a
 * tenant Kubernetes cluster's cloud-controller-manager (ServiceAccount `<release>-kccm`) copies
 * every annotation of a Service inside that cluster. Refusing MetalLB's keys there would refuse
 * the whole write, and the tenant's LoadBalancer would stay pending; on a Service that names a
 * claim they are let through, since the driver owns them there (it pins the claim's address and
 * drops the rest). Without a claim they are refused like anyone's (docs/driver.md, "Deputies").
 */
export interface CopyingDeputyOperands {
  /** ServiceAccount name suffixes, matched only for ServiceAccounts of the Service's own namespace. */
  readonly serviceAccountSuffixes: HelmOperand<readonly string[]>;
}

/**
 * The fence's allowlist: the driver, then the trusted callers' variables
 * (trusted-callers.ts), then `whoMay`, which only the refusals read.
 */
function fenceCallerVariables(driverUsername: HelmOperand<string>, trusted: TrustedCallerOperands) {
  return [
    { name: 'driver', expression: Helm.str(Pipeline.toJson(driverUsername)) },
    ...trustedCallerVariables(trusted),
    {
      // Read only by the refusals' messages.
      name: 'whoMay',
      expression: `"the metallb-iad driver (" + variables.driver + ${trustedCallersText(') and admissionPolicy.trustedCallers (')} + ")"`,
    },
  ];
}

/** `copiedForClaim`: a copying deputy of the Service's namespace writes a Service that names a claim. */
function copyingDeputyVariables(deputies: CopyingDeputyOperands) {
  return [
    { name: 'deputySuffixes', expression: Helm.str(Pipeline.toJson(deputies.serviceAccountSuffixes)) },
    {
      name: 'copiedForClaim',
      expression:
        `${cel(IP_ADDRESS_CLAIM_ANNOTATION)} in variables.annotations && variables.annotations[${cel(IP_ADDRESS_CLAIM_ANNOTATION)}] != "" && ` +
        'request.userInfo.username.startsWith("system:serviceaccount:" + object.metadata.namespace + ":") && ' +
        'dyn(variables.deputySuffixes).exists(s, request.userInfo.username.endsWith(s))',
    },
  ];
}

/** Only tenant namespaces are fenced; `cozy-*` namespaces are trusted, as in Cozystack's own policies. */
export const TENANT_NAMESPACE_CONDITION = { name: 'tenant-namespace', expression: 'object.metadata.namespace.startsWith("tenant-")' };

/** The driver's username: its ServiceAccount's. */
function driverUsername(namespace: HelmOperand<string>, serviceAccount: HelmOperand<string>): HelmOperand<string> {
  return Pipeline.printf('system:serviceaccount:%s:%s', namespace, serviceAccount);
}

/** An exemption by username, as a matchCondition: the request never reaches the validations. */
function exemptCondition(name: string, username: HelmOperand<string>) {
  return { name, expression: Helm.printf('request.userInfo.username != %s', Pipeline.toJson(username)) };
}

export interface MetallbAddressPolicyProps {
  /** Namespace of the driver's ServiceAccount. */
  readonly driverNamespace: HelmOperand<string>;
  /** Name of the driver's ServiceAccount. */
  readonly driverServiceAccount: HelmOperand<string>;
  /** The adoption Job's ServiceAccount, always in the release namespace. */
  readonly adopterServiceAccount: string;
  /** Who else may set or change the fenced keys. */
  readonly trustedCallers: TrustedCallerOperands;
  /** Who may bring the fenced annotations along on a Service that names a claim. */
  readonly copyingDeputies: CopyingDeputyOperands;
}

export class MetallbAddressPolicy extends Construct {
  constructor(scope: Construct, id: string, props: MetallbAddressPolicyProps) {
    super(scope, id);
    const driver = driverUsername(props.driverNamespace, props.driverServiceAccount);
    denyingPolicy(this, POLICY_NAME, {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: [...FENCED_RESOURCES] },
        ],
      },
      matchConditions: [
        TENANT_NAMESPACE_CONDITION,
        exemptCondition('not-the-driver', driver),
        // The adoption Job (constructs/charts/adoption-job.ts): its undo puts back the pins an admin had
        // set on a Service before adoption, which in a tenant namespace only the platform may write.
        exemptCondition('not-the-adopter', Pipeline.printf(`system:serviceaccount:%s:${props.adopterServiceAccount}`, Release.namespace)),
      ],
      variables: [
        {
          name: 'annotations',
          expression: 'has(object.metadata.annotations) ? object.metadata.annotations : {}',
        },
        {
          // CREATE has no oldObject: every annotation then counts as newly introduced.
          name: 'oldAnnotations',
          expression:
            'oldObject != null && has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}',
        },
        { name: 'labels', expression: 'has(object.metadata.labels) ? object.metadata.labels : {}' },
        {
          name: 'oldLabels',
          expression: 'oldObject != null && has(oldObject.metadata.labels) ? oldObject.metadata.labels : {}',
        },
        // spec.loadBalancerIP is fenced too: MetalLB v0.16.1 still assigns it
        // (getDesiredLbIPs in controller/service.go falls back to
        // svc.Spec.LoadBalancerIP when no loadBalancerIPs annotation is set),
        // so it is a pin as good as the annotation.
        { name: 'loadBalancerIP', expression: 'has(object.spec.loadBalancerIP) ? object.spec.loadBalancerIP : ""' },
        {
          name: 'oldLoadBalancerIP',
          expression:
            'oldObject != null && has(oldObject.spec.loadBalancerIP) ? oldObject.spec.loadBalancerIP : ""',
        },
        { name: 'externalIPs', expression: 'has(object.spec.externalIPs) ? object.spec.externalIPs : []' },
        {
          name: 'oldExternalIPs',
          expression: 'oldObject != null && has(oldObject.spec.externalIPs) ? oldObject.spec.externalIPs : []',
        },
        ...fenceCallerVariables(driver, props.trustedCallers),
        ...copyingDeputyVariables(props.copyingDeputies),
      ],
      validations: [...FENCE_VALIDATIONS],
    });
  }
}

function hint(): string {
  return `; ask for an address with the annotation ${IP_ADDRESS_CLAIM_ANNOTATION} instead`;
}
