/**
 * The tenant guide and the admin guide, as pages for the website's content/
 * tree. Every `sh` and `yaml` block runs in the guides' test
 * (test/e2e/guides.test.ts) against a real platform: the admin guide as a
 * cluster admin, then the tenant guide as a tenant admin of `tenant-demo`
 * whose kubectl context has that namespace.
 */
import { block, page } from './markdown.js';

/** The names the guides use; the guides' test makes the tenant they address. */
export const GUIDE_TENANT_NAMESPACE = 'tenant-demo';
export const GUIDE_PUBLIC_CLASS = 'public-v4';
export const GUIDE_INTERNAL_CLASS = 'internal';
const ACCESS_LABEL = 'ip.example.com/public-v4';
const PROVISIONER = 'metallb.drivers.local.sdn.cozystack.io';

const REASONS: readonly [string, string, string][] = [
  ['Bound', 'WaitingForProvisioning', 'The class\'s driver is reserving an address. Seconds; longer, read the claim\'s `Provisioned` condition.'],
  ['Bound', 'ClassNotAllowed', 'The class\'s `spec.namespaceSelector` does not select the namespace. Label the namespace, or use another class.'],
  ['Bound', 'ClassLimitReached', 'The namespace holds the class\'s `maxClaimsPerNamespace` claims. Delete one, or raise the limit.'],
  ['ClassResolved', 'ClassNotFound, NoDefaultClass, MultipleDefaultClasses', 'The claim names no class that exists, or there is not exactly one default class.'],
  ['Provisioned', 'ClassExhausted', 'The class has no free address of the family. Free one, or widen the class\'s ranges.'],
  ['Provisioned', 'FamilyNotServed', 'The class has no range of the claim\'s family (an IPv6 claim on an IPv4-only class).'],
  ['Provisioned', 'BackendNotReady', 'The class\'s MetalLB pool is not written; the class\'s `BackendReady` condition says why.'],
  ['Bound', 'AddressLost', 'The address left the class (its range was removed). Put the range back; the claim recovers.'],
  ['Attached', 'WrongFamily, LoadBalancerClassMismatch, AssociationRejected, PortInUse, BackendMismatch, ClaimNotBound', 'A Service names the claim but cannot carry it; the Service\'s `Attached` condition says which.'],
];

export function adminGuide(): string {
  return page(
    {
      title: 'IP address classes',
      linkTitle: 'IP address classes',
      description: 'Offer IP addresses to tenants as classes: who may draw from each, how many, and what to do when a claim waits.',
      weight: 45,
    },
    [
      'Tenants reserve addresses with an `IPAddressClaim`; you offer them as `IPAddressClass`es, the way StorageClasses offer volumes. The `address-controller` package binds claims; the `metallb-iad` package reserves addresses in MetalLB for classes whose provisioner is `' + PROVISIONER + '`. Enable both in the platform\'s packages.',
      '## Offer a class',
      'A class names its driver, what happens to an address when its claim goes (`Retain` keeps it for you, `Delete` frees it), and its ranges. Who may draw from it and how much are optional: `namespaceSelector` picks namespaces by label (absent: every namespace), `maxClaimsPerNamespace` caps the claims one namespace holds (absent: no limit). One class may be the default, for claims that name none.',
      block('yaml', [
        'apiVersion: local.sdn.cozystack.io/v1alpha1',
        'kind: IPAddressClass',
        'metadata:',
        `  name: ${GUIDE_PUBLIC_CLASS}`,
        'spec:',
        `  provisioner: ${PROVISIONER}`,
        '  reclaimPolicy: Retain',
        '  namespaceSelector:',
        '    matchLabels:',
        `      ${ACCESS_LABEL}: allowed`,
        '  maxClaimsPerNamespace: 2',
        '  parameters:',
        '    addresses: ["198.51.100.0/28"]',
        '---',
        'apiVersion: local.sdn.cozystack.io/v1alpha1',
        'kind: IPAddressClass',
        'metadata:',
        `  name: ${GUIDE_INTERNAL_CLASS}`,
        '  annotations:',
        '    ipaddressclass.local.sdn.cozystack.io/is-default-class: "true"',
        'spec:',
        `  provisioner: ${PROVISIONER}`,
        '  reclaimPolicy: Delete',
        '  parameters:',
        '    addresses: ["203.0.113.0/26"]',
      ]),
      'The driver writes each class\'s MetalLB pool and advertisement and says so on the class:',
      block('sh', [
        `kubectl wait --for=condition=BackendReady ipclass/${GUIDE_PUBLIC_CLASS} ipclass/${GUIDE_INTERNAL_CLASS} --timeout=120s`,
        'kubectl get ipclass',
      ]),
      '## Let a tenant draw from a restricted class',
      `A tenant's claims for \`${GUIDE_PUBLIC_CLASS}\` are refused at admission, and never bound, until its namespace carries the label the class selects:`,
      block('sh', [`kubectl label namespace ${GUIDE_TENANT_NAMESPACE} ${ACCESS_LABEL}=allowed --overwrite`]),
      'Taking the label away later stops new claims; a claim that already holds an address keeps it (an address never vanishes from a running workload) and shows `ClassAllowed=False` until it is deleted or the label comes back. Lowering `maxClaimsPerNamespace` takes nothing back either.',
      '## Cap all claims of a namespace',
      'A ResourceQuota counts a namespace\'s claims of every class together; `maxClaimsPerNamespace` is the per-class cap.',
      block('yaml', [
        'apiVersion: v1',
        'kind: ResourceQuota',
        'metadata:',
        '  name: ip-address-claims',
        `  namespace: ${GUIDE_TENANT_NAMESPACE}`,
        'spec:',
        '  hard:',
        '    count/ipaddressclaims.local.sdn.cozystack.io: "10"',
      ]),
      'Until the quota controller has counted it (a moment), the apiserver refuses claims in the namespace ("status unknown for quota"); then `kubectl describe` shows what is used:',
      block('sh', [
        `timeout 60 sh -c 'until kubectl get resourcequota ip-address-claims -n ${GUIDE_TENANT_NAMESPACE} -o jsonpath="{.status.used}" | grep -q ipaddressclaims; do sleep 1; done'`,
        `kubectl describe resourcequota ip-address-claims -n ${GUIDE_TENANT_NAMESPACE}`,
      ]),
      '## See what is used',
      '`kubectl get ipclass` shows each class\'s capacity, what is in use and what is free. Claims waiting anywhere, and why:',
      block('sh', [
        "kubectl get ipclaim -A -o custom-columns='NAMESPACE:.metadata.namespace,NAME:.metadata.name,CLASS:.status.className,PHASE:.status.phase,REASON:.status.conditions[?(@.type==\"Bound\")].reason'",
      ]),
      'The address-controller exports `cozy_addresses_claims` (per class and phase), `cozy_addresses_claim_pending_oldest_seconds` and, for classes with a per-namespace limit, `cozy_addresses_class_namespace_claims` against `cozy_addresses_class_namespace_limit`; metallb-iad exports the class books and MetalLB\'s configuration state. Both packages ship alert rules and the "IP addresses" dashboard to the platform\'s monitoring.',
      '## Recycle Released addresses',
      'Under `Retain`, an address whose claim was deleted stays `Released`, still reserved, bound to nothing. When it may be handed out again, clear its `claimRef`; it becomes `Available` and the next claim of its class gets it. Every Released address of a class:',
      block('sh', [
        `for address in $(kubectl get ipaddresses.local.sdn.cozystack.io -o jsonpath='{range .items[?(@.status.phase=="Released")]}{.metadata.name}{" "}{.spec.className}{"\\n"}{end}' | awk '$2 == "${GUIDE_PUBLIC_CLASS}" {print $1}'); do`,
        '  kubectl patch ipaddresses.local.sdn.cozystack.io "$address" --type=json -p \'[{"op":"remove","path":"/spec/claimRef"}]\'',
        'done',
      ]),
      '## Adopt addresses already in use',
      'Services that carry a MetalLB address from before (pinned with `metallb.io/loadBalancerIPs`, or assigned from a pool the class now serves) are adopted by the metallb-iad package\'s Job: each gets a claim in its namespace and keeps its IP, without a gap. Enable it in the package\'s values and set which pool to adopt; setting `adoption.mode: undo` puts every Service back as it was:',
      block('text', ['adoption:', '  enabled: true', `  pool: ${GUIDE_PUBLIC_CLASS}`, '  mode: adopt']),
      '## When a claim waits',
      'Every reason is a condition on the claim (its `Bound`, `ClassResolved` or `Provisioned` condition, or `Attached` on the Service naming it) and a Warning Event when it first appears:',
      [
        '| Condition | Reason | What to do |',
        '|---|---|---|',
        ...REASONS.map(([type, reason, what]) => `| ${type} | ${reason} | ${what} |`),
      ].join('\n'),
    ],
  );
}

/** A LoadBalancer Service `name` that names the claim `web`, in front of the Pods labelled `app`, on `port`. */
function claimService(name: string, app: string, port: number): string {
  return block('yaml', [
    'apiVersion: v1',
    'kind: Service',
    'metadata:',
    `  name: ${name}`,
    '  annotations:',
    '    local.sdn.cozystack.io/ip-address-claim: web',
    'spec:',
    '  type: LoadBalancer',
    '  selector:',
    `    app: ${app}`,
    '  ports:',
    `    - port: ${port}`,
  ]);
}

export function tenantGuide(): string {
  return page(
    {
      title: 'Reserve an IP address',
      linkTitle: 'IP addresses',
      description: 'Reserve a public or internal IP address, attach it to a workload, move it, and keep it.',
      weight: 35,
    },
    [
      'An address you reserve is yours until you delete the claim: it survives your Services being deleted, replaced or moved to another application. The commands below run in your tenant namespace.',
      '## See what you may use',
      'Each class is a kind of address your platform offers. `NAMESPACES` says which namespaces may use it (empty: all of them; otherwise a label selector your namespace\'s labels must match), `PERNAMESPACE` how many claims one namespace may hold, `FREE` how many addresses are left:',
      block('sh', ['kubectl get ipclass', `kubectl get namespace ${GUIDE_TENANT_NAMESPACE} --show-labels`]),
      '## Reserve an address',
      block('yaml', [
        'apiVersion: local.sdn.cozystack.io/v1alpha1',
        'kind: IPAddressClaim',
        'metadata:',
        '  name: web',
        'spec:',
        `  className: ${GUIDE_PUBLIC_CLASS}`,
        '  family: IPv4',
      ]),
      'Omit `className` for the platform\'s default class; `family: Dual` reserves one IPv4 and one IPv6 address. The claim is `Bound` once it holds its address:',
      block('sh', ["kubectl wait --for=jsonpath='{.status.phase}'=Bound ipclaim/web --timeout=120s", 'kubectl get ipclaim web']),
      '## Attach it to a workload',
      'A LoadBalancer Service names the claim in an annotation; it gets the claim\'s address, and only it does:',
      claimService('web', 'web', 80),
      block('sh', [
        "claimed=$(kubectl get ipclaim web -o jsonpath='{.status.addresses[0].address}')",
        "kubectl wait --for=jsonpath='{.status.loadBalancer.ingress[0].ip}'=\"$claimed\" service/web --timeout=120s",
        'echo "service/web answers on $claimed"',
      ]),
      'Charts of the platform\'s applications take the claim in their values and set the annotation for you. One claim serves one Service at a time, unless you let it be shared (below): a second Service naming it gets nothing, and its `Attached` condition says so.',
      '## Move it to another workload',
      'Delete the Service (or take the annotation off): the address is held for the claim, silent. The next Service naming the claim gets the same address:',
      block('sh', [
        'kubectl delete service web',
        "kubectl wait --for=jsonpath='{.status.phase}'=Bound ipclaim/web --timeout=30s",
      ]),
      claimService('web-v2', 'web-v2', 80),
      block('sh', [
        "claimed=$(kubectl get ipclaim web -o jsonpath='{.status.addresses[0].address}')",
        "kubectl wait --for=jsonpath='{.status.loadBalancer.ingress[0].ip}'=\"$claimed\" service/web-v2 --timeout=120s",
      ]),
      '## Share it between Services',
      'Several Services may carry one address on different ports, say HTTP from one and HTTPS from another: set `sharing: Shared` on the claim (you may at any time; `Exclusive`, the default, lets one Service carry it), then name it from each Service:',
      block('sh', ['kubectl patch ipclaim web --type=merge -p \'{"spec":{"sharing":"Shared"}}\'']),
      claimService('web-tls', 'web-v2', 443),
      block('sh', [
        "claimed=$(kubectl get ipclaim web -o jsonpath='{.status.addresses[0].address}')",
        "kubectl wait --for=jsonpath='{.status.loadBalancer.ingress[0].ip}'=\"$claimed\" service/web-tls --timeout=120s",
        "kubectl get ipclaim web -o jsonpath='{.status.associatedTo.name} {.status.sharedWith[*].name}{\"\\n\"}'",
      ]),
      'No two Services may use the same port and protocol on it, and Services with `externalTrafficPolicy: Local` must all select the same Pods: a Service that breaks either gets nothing, with `PortInUse` or `BackendMismatch` in its `Attached` condition. Deleting one Service leaves the others serving; the address is held for the claim again only when the last one goes.',
      '## When a claim stays Pending',
      'Its conditions say why. A class may limit how many claims one namespace holds; a claim over it waits:',
      block('yaml', [
        'apiVersion: local.sdn.cozystack.io/v1alpha1',
        'kind: IPAddressClaim',
        'metadata:',
        '  name: api',
        'spec:',
        `  className: ${GUIDE_PUBLIC_CLASS}`,
        '---',
        'apiVersion: local.sdn.cozystack.io/v1alpha1',
        'kind: IPAddressClaim',
        'metadata:',
        '  name: extra',
        'spec:',
        `  className: ${GUIDE_PUBLIC_CLASS}`,
      ]),
      block('sh', [
        "kubectl wait --for=jsonpath='{.status.phase}'=Bound ipclaim/api --timeout=120s",
        "kubectl wait --for=jsonpath='{.status.conditions[?(@.type==\"Bound\")].reason}'=ClassLimitReached ipclaim/extra --timeout=60s",
        "kubectl get ipclaim extra -o jsonpath='{range .status.conditions[*]}{.type}{\"=\"}{.status}{\" \"}{.reason}{\": \"}{.message}{\"\\n\"}{end}'",
      ]),
      'The reasons you may meet: `WaitingForProvisioning` (seconds), `ClassLimitReached` (delete a claim of that class), `ClassNotAllowed` (your namespace may not use the class: ask your admin), `ClassExhausted` (the class is full), `ClassNotFound` (a typo in `className`). A claim your namespace may not make at all is refused when you create it; to ask without creating anything, use `kubectl create --dry-run=server -f claim.yaml`.',
      '## Give it back',
      'Deleting the claim gives the address back. Depending on the class, it is freed for anyone, or kept `Released` for your platform\'s admin, who decides when it is handed out again; either way it is no longer yours:',
      block('sh', ['kubectl delete ipclaim extra', 'kubectl delete service web-v2 web-tls', 'kubectl delete ipclaim web api']),
    ],
  );
}
