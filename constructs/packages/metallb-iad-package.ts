/** packages/system/metallb-iad: the MetalLB driver, in cozy-metallb, with the annotation fence. */
import { Type, type Static, type TObject } from '@sinclair/typebox';
import type { Construct } from 'constructs';
import { ADOPTION_POOL_RULES, ADOPTION_RULES, adopterName } from '../charts/adoption-job.js';
import { policyRules } from '../controller/rbac.js';
import { METALLB_IAD } from '../charts/metallb-iad.js';
import type { HelmChart } from '../helm/chart-writer.js';
import { Capabilities, Pipeline, Release, valuesOf } from '../helm/expr.js';
import { defineValues } from '../helm/values.js';
import { IMAGES, imageValues } from '../images.js';
import { DRIVER_ALERTS } from '../monitoring/alert-rules.js';
import { addPackageMonitoring } from '../monitoring/package-monitoring.js';
import { monitoringSuites } from '../monitoring/unit-tests.js';
import { MetallbAddressPolicy } from './metallb-address-policy.js';
import { MetallbClassPolicy } from './metallb-class-policy.js';
import { INSTALL } from './sources.js';
import { adoptionJobSuite, fenceAllowlistSuite, fenceGateSuite, fenceNotesSuites, fenceRequiredSuite, fenceSuite, operatorInstallSuite, VAP_API } from './unit-tests.js';
import { vendoredChartValues, WrapperChart } from './wrapper-chart.js';
import { COZYSTACK_TRUSTED_GROUPS, trustedCallersSchema } from './trusted-callers.js';
import { DNS_LABEL_MAX, DNS_LABEL_PATTERN } from '../../api/names.js';

/** Cozystack runs MetalLB in cozy-metallb, not upstream's metallb-system. */
export const COZY_METALLB_NAMESPACE = 'cozy-metallb';

export const metallbIadPackageValuesSchema = Type.Object(
  {
    [METALLB_IAD]: vendoredChartValues(METALLB_IAD),
    admissionPolicy: Type.Object(
      {
        driverServiceAccount: Type.Object(
          {
            namespace: Type.Union([Type.Literal(''), Type.String({ pattern: DNS_LABEL_PATTERN, maxLength: DNS_LABEL_MAX })], {
              description: 'Namespace of the driver ServiceAccount; empty means the release namespace.',
            }),
            name: Type.String({ pattern: DNS_LABEL_PATTERN, maxLength: 253, description: 'Name of the driver ServiceAccount.' }),
          },
          { additionalProperties: false, description: "The driver's ServiceAccount: always allowed to pin MetalLB addresses in tenant namespaces." },
        ),
        trustedCallers: trustedCallersSchema('Who besides the driver may set or change the fenced keys in tenant namespaces.'),
        copyingDeputies: Type.Object(
          {
            serviceAccountSuffixes: Type.Array(Type.String({ pattern: '^-?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$', maxLength: 253 }), {
              description:
                "Suffixes of ServiceAccount names: such a ServiceAccount of a Service's own namespace copies annotations it does not author (a tenant Kubernetes cluster's cloud-controller-manager, <release>-kccm).",
            }),
          },
          {
            additionalProperties: false,
            description:
              'Deputies that may bring MetalLB address annotations along on a Service that names a claim (the driver then chooses the address and drops them); without a claim they are refused like anyone else.',
          },
        ),
        required: Type.Boolean({
          description:
            'Fail the render when the cluster does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy, instead of installing without the fence (a NOTES.txt warning).',
        }),
      },
      { additionalProperties: false, description: 'The ValidatingAdmissionPolicy fencing MetalLB address annotations.' },
    ),
  },
  { additionalProperties: false },
);
export type MetallbIadPackageValues = Static<typeof metallbIadPackageValuesSchema>;

export function metallbIadPackageDefaults(): MetallbIadPackageValues {
  return {
    [METALLB_IAD]: { image: imageValues(IMAGES.metallbIad), metallbNamespace: COZY_METALLB_NAMESPACE },
    admissionPolicy: {
      driverServiceAccount: { namespace: '', name: METALLB_IAD },
      trustedCallers: { usernames: [], groups: [...COZYSTACK_TRUSTED_GROUPS], serviceAccounts: [] },
      copyingDeputies: { serviceAccountSuffixes: ['-kccm'] },
      required: false,
    },
  };
}

/** The vendored chart's values the package renders with. */
interface DriverValues {
  readonly metallbNamespace?: string;
  readonly placeholderNamespace?: string;
  readonly image?: { readonly repository: string; readonly tag: string };
}

export class MetallbIadPackage extends WrapperChart<typeof metallbIadPackageValuesSchema> {
  constructor(scope: Construct, id: string, upstream: HelmChart<TObject>, values: MetallbIadPackageValues = metallbIadPackageDefaults()) {
    super(scope, id, {
      dir: INSTALL.metallbIad.dir,
      namespace: INSTALL.metallbIad.namespace,
      upstream,
      values: defineValues(metallbIadPackageValuesSchema, values),
    });
    const v = valuesOf<MetallbIadPackageValues>();
    const file = this.addTemplate('metallb-address-policy.yaml', { when: Capabilities.hasApi(VAP_API) });
    new MetallbAddressPolicy(file, 'Policy', {
      driverNamespace: Pipeline.orDefault(v('admissionPolicy.driverServiceAccount.namespace'), Release.namespace),
      driverServiceAccount: v('admissionPolicy.driverServiceAccount.name'),
      adopterServiceAccount: adopterName(METALLB_IAD),
      trustedCallers: {
        usernames: v('admissionPolicy.trustedCallers.usernames'),
        groups: v('admissionPolicy.trustedCallers.groups'),
        serviceAccounts: v('admissionPolicy.trustedCallers.serviceAccounts'),
      },
      copyingDeputies: { serviceAccountSuffixes: v('admissionPolicy.copyingDeputies.serviceAccountSuffixes') },
    });

    // A class whose own CIDRs overlap is refused before it is stored (the driver refuses a-b ranges too).
    new MetallbClassPolicy(this.addTemplate('metallb-class-policy.yaml', { when: Capabilities.hasApi(VAP_API) }), 'ClassPolicy');

    // Where the fence cannot render, say so: a fail when the platform requires it, else a NOTES.txt warning.
    this.addFile('templates/metallb-address-policy-required.yaml', fenceRequiredTemplate());
    this.addFile('templates/NOTES.txt', fenceNotes());

    const release = { name: INSTALL.metallbIad.releaseName, namespace: INSTALL.metallbIad.namespace };
    const driver = values[METALLB_IAD] as DriverValues;
    // The vendored chart's defaults have every key (metallbIadDefaults).
    const upstreamDefaults = upstream.defaults as Required<DriverValues>;
    // The chart's own defaults apply where the package does not override them.
    const metallbNamespace = driver.metallbNamespace ?? upstreamDefaults.metallbNamespace;
    const placeholderNamespace = (driver.placeholderNamespace ?? upstreamDefaults.placeholderNamespace) || release.namespace;
    const sa = values.admissionPolicy.driverServiceAccount;
    const fence = {
      driverNamespace: sa.namespace || release.namespace,
      driverServiceAccount: sa.name,
      adopterServiceAccount: adopterName(METALLB_IAD),
      trustedCallers: values.admissionPolicy.trustedCallers,
    };
    this.addUnitTests('metallb-iad_test.yaml', [
      operatorInstallSuite(METALLB_IAD, values[METALLB_IAD], release, [
        `--metallb-namespace=${metallbNamespace}`,
        `--placeholder-namespace=${placeholderNamespace}`,
      ]),
    ]);
    const image = driver.image ?? upstreamDefaults.image;
    this.addUnitTests('adoption_test.yaml', [
      adoptionJobSuite(release, {
        chart: METALLB_IAD,
        adopter: adopterName(METALLB_IAD),
        image: `${image.repository}:${image.tag}`,
        metallbNamespace,
        clusterRules: policyRules(ADOPTION_RULES),
        poolRules: policyRules(ADOPTION_POOL_RULES),
      }),
    ]);
    this.addUnitTests('metallb-address-policy_test.yaml', [
      fenceSuite(release, fence),
      fenceAllowlistSuite(release, fence),
      fenceGateSuite(release),
      fenceRequiredSuite(release),
      ...fenceNotesSuites(release),
    ]);
    addPackageMonitoring(this, { controller: METALLB_IAD, alerts: DRIVER_ALERTS });
    this.addUnitTests('monitoring_test.yaml', monitoringSuites(METALLB_IAD, DRIVER_ALERTS, release));
  }
}

const SERVED = `.Capabilities.APIVersions.Has ${JSON.stringify(VAP_API)}`;

/** The message both the fail and the warning give. */
export const FENCE_MISSING =
  'this cluster does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (for helm template: --api-versions admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy), so the fence cozystack-metallb-address-policy is not installed and tenants could pin MetalLB addresses';

function fenceRequiredTemplate(): string {
  return [
    '{{- /* Generated by cozy-addresses (npm run synth). Do not edit: change constructs/ instead. */ -}}',
    `{{- if and .Values.admissionPolicy.required (not (${SERVED})) }}`,
    `{{- fail ${JSON.stringify(`admissionPolicy.required is true, but ${FENCE_MISSING}`)} }}`,
    '{{- end }}',
    '',
  ].join('\n');
}

function fenceNotes(): string {
  return [
    '{{- /* Generated by cozy-addresses (npm run synth). Do not edit: change constructs/ instead. */ -}}',
    'metallb-iad: IP addresses for tenant Services through the annotation local.sdn.cozystack.io/ip-address-claim.',
    `{{- if not (${SERVED}) }}`,
    '',
    `WARNING: ${FENCE_MISSING}. Set admissionPolicy.required=true to refuse such an install.`,
    '{{- end }}',
    '',
  ].join('\n');
}
