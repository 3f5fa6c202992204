/**
 * A typed model of how Cozystack's platform chart turns bundle settings into
 * Package objects (docs/packaging.md), reduced to the system
 * bundle, which is where MetalLB and these packages live. The iaas, paas and
 * naas bundles never emit MetalLB or an address package and are not modelled.
 *
 * The driver's gate is derived from the MetalLB rule here, never restated:
 * change where MetalLB is emitted and metallb-iad follows.
 */

export const PLATFORM_VARIANTS = ['default', 'isp-full', 'isp-full-generic', 'isp-hosted'] as const;
export type PlatformVariant = (typeof PLATFORM_VARIANTS)[number];

export const SYSTEM_VARIANTS = ['isp-full', 'isp-full-generic', 'isp-hosted'] as const;
export type SystemVariant = (typeof SYSTEM_VARIANTS)[number];

/** The `bundles` values of the platform chart that decide which Packages render. */
export interface Bundles {
  readonly system: { readonly enabled: boolean; readonly variant: SystemVariant };
  readonly enabledPackages: readonly string[];
  readonly disabledPackages: readonly string[];
}

/** What each platform variant's values file presets (values.yaml, values-<variant>.yaml). */
export const PRESETS: Record<PlatformVariant, Bundles> = {
  default: { system: { enabled: false, variant: 'isp-full' }, enabledPackages: [], disabledPackages: [] },
  'isp-full': { system: { enabled: true, variant: 'isp-full' }, enabledPackages: [], disabledPackages: [] },
  'isp-full-generic': {
    system: { enabled: true, variant: 'isp-full-generic' },
    enabledPackages: ['cozystack.backupstrategy-controller'],
    disabledPackages: [],
  },
  'isp-hosted': { system: { enabled: true, variant: 'isp-hosted' }, enabledPackages: [], disabledPackages: [] },
};

const p = (name: string) => `cozystack.${name}`;

/** `cozystack.platform.system.common-packages`: the data plane shared by the two full variants. */
export const COMMON_PACKAGES = [
  'kubeovn-webhook',
  'kubeovn-plunger',
  'cozy-proxy',
  'metallb',
  'reloader',
  'linstor-scheduler',
  'snapshot-controller',
  'securitygroup-controller',
].map(p);

/** Which system variants call common-packages. MetalLB's emission follows from this table. */
export const SYSTEM_HEADS: Record<SystemVariant, { readonly packages: readonly string[]; readonly commonPackages: boolean }> = {
  'isp-full': { packages: ['networking', 'multus', 'linstor', 'cozystack-scheduler'].map(p), commonPackages: true },
  'isp-full-generic': { packages: ['networking', 'multus', 'linstor', 'cozystack-scheduler'].map(p), commonPackages: true },
  'isp-hosted': { packages: ['networking', 'cozystack-scheduler'].map(p), commonPackages: false },
};

/** The system bundle body, emitted on every system variant (without the OIDC extras). */
export const SYSTEM_BODY = [
  'cozystack-engine',
  'gateway-api-crds',
  'cert-manager',
  'flux-plunger',
  'flux-shard-operator',
  'victoria-metrics-operator',
  'tenant-application',
  'ingress-application',
  'gateway-application',
  'seaweedfs-application',
  'info-application',
  'monitoring-application',
  'etcd-application',
  'bucket-application',
  'cozystack-basics',
  'backupstrategy-controller',
  'backup-controller',
  'velero',
  'vertical-pod-autoscaler',
  'metrics-server',
  'monitoring-agents',
  'goldpinger',
  'prometheus-operator-crds',
  'grafana-operator',
  'etcd-operator',
  'postgres-operator',
  'objectstorage-controller',
].map(p);

/** Optional system packages: emitted only when named in enabledPackages. */
export const SYSTEM_OPTIONAL = [
  'nfs-driver',
  'telepresence',
  'external-dns',
  'external-dns-application',
  'kuberture',
  'external-secrets-operator',
  'linstor-gui',
  'hetzner-robotlb',
].map(p);

export const METALLB = p('metallb');
export const ADDRESS_CONTROLLER_PACKAGE = p('address-controller');
export const METALLB_IAD_PACKAGE = p('metallb-iad');

/** `cozystack.platform.package`: a default package renders unless disabled. */
function defaultPackage(bundles: Bundles, name: string): boolean {
  return !bundles.disabledPackages.includes(name);
}

/** `cozystack.platform.package.optional`: renders only when enabled, and disabled wins. */
function optionalPackage(bundles: Bundles, name: string): boolean {
  return bundles.enabledPackages.includes(name) && defaultPackage(bundles, name);
}

/** The MetalLB rule: the variant's head calls common-packages, and MetalLB is not disabled. */
export function metallbRendered(bundles: Bundles): boolean {
  return (
    bundles.system.enabled && SYSTEM_HEADS[bundles.system.variant].commonPackages && defaultPackage(bundles, METALLB)
  );
}

/**
 * The driver: optional, and only where MetalLB itself renders. It hard-depends
 * on the core, so a disabled core suppresses it (it would wait forever).
 */
export function metallbIadRendered(bundles: Bundles): boolean {
  return (
    metallbRendered(bundles) &&
    optionalPackage(bundles, METALLB_IAD_PACKAGE) &&
    defaultPackage(bundles, ADDRESS_CONTROLLER_PACKAGE)
  );
}

/**
 * The core: an optional system package, offered on every system variant (it
 * needs nothing else) and, like every system package, only with the system
 * bundle on; enabling the driver brings it along, as a hard dependency must
 * render wherever its dependent does (docs/packaging.md).
 */
export function addressControllerRendered(bundles: Bundles): boolean {
  return (
    bundles.system.enabled &&
    defaultPackage(bundles, ADDRESS_CONTROLLER_PACKAGE) &&
    (bundles.enabledPackages.includes(ADDRESS_CONTROLLER_PACKAGE) || metallbIadRendered(bundles))
  );
}

export const ADDRESS_PACKAGE_RULES: readonly { readonly name: string; readonly rendered: (b: Bundles) => boolean }[] = [
  { name: ADDRESS_CONTROLLER_PACKAGE, rendered: addressControllerRendered },
  { name: METALLB_IAD_PACKAGE, rendered: metallbIadRendered },
];

/** Every Package the system bundle renders for these settings, sorted. */
export function renderedPackages(bundles: Bundles): string[] {
  const rendered = ADDRESS_PACKAGE_RULES.filter((rule) => rule.rendered(bundles)).map((rule) => rule.name);
  if (bundles.system.enabled) {
    const head = SYSTEM_HEADS[bundles.system.variant];
    const candidates = [...head.packages, ...(head.commonPackages ? COMMON_PACKAGES : []), ...SYSTEM_BODY];
    rendered.push(...candidates.filter((name) => defaultPackage(bundles, name)));
    rendered.push(...SYSTEM_OPTIONAL.filter((name) => optionalPackage(bundles, name)));
  }
  return [...new Set(rendered)].sort();
}

/** The configurations dist/variants/<variant>.yaml lists for each platform variant. */
export const NAMED_CONFIGURATIONS: readonly { readonly name: string; readonly apply: (b: Bundles) => Bundles }[] = [
  { name: 'preset', apply: (b) => b },
  {
    name: 'addresses-enabled',
    apply: (b) => ({ ...b, enabledPackages: [...b.enabledPackages, ADDRESS_CONTROLLER_PACKAGE, METALLB_IAD_PACKAGE] }),
  },
  {
    name: 'addresses-enabled-driver-disabled',
    apply: (b) => ({
      ...b,
      enabledPackages: [...b.enabledPackages, ADDRESS_CONTROLLER_PACKAGE, METALLB_IAD_PACKAGE],
      disabledPackages: [...b.disabledPackages, METALLB_IAD_PACKAGE],
    }),
  },
  {
    name: 'addresses-enabled-metallb-disabled',
    apply: (b) => ({
      ...b,
      enabledPackages: [...b.enabledPackages, ADDRESS_CONTROLLER_PACKAGE, METALLB_IAD_PACKAGE],
      disabledPackages: [...b.disabledPackages, METALLB],
    }),
  },
];
