/** The upstream chart of the MetalLB driver (docs/driver.md). */
import type { V1Namespace } from '@kubernetes/client-node';
import { Type, type Static } from '@sinclair/typebox';
import type { Construct } from 'constructs';
import { GROUP } from '../../api/v1alpha1/group.js';
import { ADOPTION_DEFAULTS, AdoptionJob, adoptionValuesSchema } from './adoption-job.js';
import { ControllerChart } from '../controller/controller-chart.js';
import { commonLabels } from '../controller/labels.js';
import type { RbacRule } from '../controller/rbac.js';
import { controllerDefaults, controllerValuesSchema } from '../controller/values.js';
import { Helm, Pipeline, Release, valuesOf } from '../helm/expr.js';
import { templatedObject } from '../helm/templated-object.js';
import { defineValues } from '../helm/values.js';
import { IMAGES, type ImagePin } from '../images.js';
import { RELEASE_VERSION } from '../version.js';
import { DNS_LABEL_MAX, DNS_LABEL_PATTERN } from '../../api/names.js';

export const METALLB_IAD = 'metallb-iad';

export const metallbIadValuesSchema = controllerValuesSchema({
  metallbNamespace: Type.String({
    pattern: DNS_LABEL_PATTERN,
    maxLength: DNS_LABEL_MAX,
    description: "Namespace of MetalLB, where the driver writes each class's IPAddressPool and L2Advertisement.",
  }),
  placeholderNamespace: Type.Union([Type.Literal(''), Type.String({ pattern: DNS_LABEL_PATTERN, maxLength: DNS_LABEL_MAX })], {
    description:
      'Namespace of the placeholder Services that hold reservations; tenants must not write there. ' +
      'Empty means the release namespace; any other name is created by the chart.',
  }),
  adoption: adoptionValuesSchema,
});
export type MetallbIadValues = Static<typeof metallbIadValuesSchema>;

export function metallbIadDefaults(image: ImagePin = IMAGES.metallbIad): MetallbIadValues {
  return { ...controllerDefaults(image), metallbNamespace: 'metallb-system', placeholderNamespace: '', adoption: ADOPTION_DEFAULTS };
}

/**
 * Cluster-wide: read claims and classes (and write the classes' status),
 * provision addresses, render MetalLB pools, read MetalLB's configuration
 * state, and pin tenant Services (any namespace) through update/patch.
 * Creating and deleting Services is narrowed to the placeholder namespace.
 */
export const METALLB_IAD_RULES: readonly RbacRule[] = [
  { apiGroup: '', resources: ['events'], verbs: ['create', 'patch'] },
  { apiGroup: '', resources: ['services'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
  // The verdict on a Service naming a claim: the driver's Attached condition (docs/driver.md).
  { apiGroup: '', resources: ['services/status'], verbs: ['update'] },
  { apiGroup: GROUP, resources: ['ipaddressclaims', 'ipaddressclasses'], verbs: ['get', 'list', 'watch'] },
  {
    apiGroup: GROUP,
    resources: ['ipaddresses'],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  },
  // Claims: only the driver's own condition (Provisioned, while a class is full); the core owns the rest.
  { apiGroup: GROUP, resources: ['ipaddresses/status', 'ipaddressclasses/status', 'ipaddressclaims/status'], verbs: ['get', 'patch', 'update'] },
  {
    apiGroup: 'metallb.io',
    resources: ['ipaddresspools', 'l2advertisements', 'bgpadvertisements'],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  },
  // MetalLB's own word on whether it applies its configuration, said on every served class.
  { apiGroup: 'metallb.io', resources: ['configurationstates'], verbs: ['get', 'list', 'watch'] },
];

export const PLACEHOLDER_RULES: readonly RbacRule[] = [
  { apiGroup: '', resources: ['services'], verbs: ['create', 'delete'] },
];

export interface MetallbIadChartProps {
  /**
   * The values written to values.yaml.
   * @default metallbIadDefaults()
   */
  readonly values?: MetallbIadValues;
}

export class MetallbIadChart extends ControllerChart<typeof metallbIadValuesSchema> {
  constructor(scope: Construct, id: string, props: MetallbIadChartProps = {}) {
    const v = valuesOf<MetallbIadValues>();
    const placeholderNamespace = Pipeline.orDefault(v('placeholderNamespace'), Release.namespace);
    super(scope, id, {
      name: METALLB_IAD,
      version: RELEASE_VERSION,
      appVersion: RELEASE_VERSION,
      description: 'MetalLB driver for IP addresses as a first-class resource',
      kubeVersion: '>=1.29.0-0',
      keywords: ['ipam', 'metallb', 'networking', 'cozystack'],
      values: defineValues(metallbIadValuesSchema, props.values ?? metallbIadDefaults()),
      clusterRules: METALLB_IAD_RULES,
      namespacedGrants: [{ suffix: 'placeholders', namespace: Helm.str(placeholderNamespace), rules: PLACEHOLDER_RULES }],
      extraArgs: [
        Helm.printf('--metallb-namespace=%s', v('metallbNamespace')),
        Helm.printf('--placeholder-namespace=%s', placeholderNamespace),
      ],
    });

    // A separate placeholder namespace is part of the release, so its Role can bind.
    const separate = Pipeline.and(v('placeholderNamespace'), Pipeline.ne(v('placeholderNamespace'), Release.namespace));
    templatedObject<V1Namespace>(this.addTemplate('namespace.yaml', { when: separate }), 'PlaceholderNamespace', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: Helm.str(v('placeholderNamespace')), labels: commonLabels(METALLB_IAD) },
    });

    new AdoptionJob(this, 'Adoption', { chartName: METALLB_IAD });
  }
}
