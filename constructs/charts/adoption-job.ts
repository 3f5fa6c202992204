/**
 * Adoption from the chart (docs/adoption.md): an opt-in Job that runs the
 * driver image's `adopt` subcommand in the cluster, so an admin adopts a
 * pool's live Services (or undoes it) by setting values, with no checkout.
 *
 * It is a Helm hook (post-install, post-upgrade; the previous Job is deleted
 * before the next is made, and the last one stays for `kubectl logs`): Flux's
 * helm-controller and `helm upgrade` wait for it and report its failure on the
 * release. Adoption converges, so the rerun on every later upgrade changes
 * nothing. Its ServiceAccount has only what adoption reads and writes.
 */
import type { V1Job, V1ServiceAccount } from '@kubernetes/client-node';
import { Type, type Static } from '@sinclair/typebox';
import { Construct } from 'constructs';
import { GROUP } from '../../api/v1alpha1/group.js';
import { DNS_LABEL_MAX, DNS_LABEL_PATTERN } from '../../api/names.js';
import { commonLabels } from '../controller/labels.js';
import { ControllerClusterRbac, ControllerNamespacedRbac, type RbacRule } from '../controller/rbac.js';
import { controllerPodBasics } from '../controller/deployment.js';
import type { ControllerValues } from '../controller/values.js';
import { Helm, Pipeline, Release, valuesOf, type HelmOperand } from '../helm/expr.js';
import type { HelmChart } from '../helm/chart-writer.js';
import type { TObject } from '@sinclair/typebox';
import { templatedObject } from '../helm/templated-object.js';

const NAMESPACED_NAME = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$';
/** A DNS label, or empty for "not given". */
const optionalName = (description: string) => Type.Union([Type.Literal(''), Type.String({ pattern: DNS_LABEL_PATTERN, maxLength: DNS_LABEL_MAX })], { description });

/** What `metallb-iad adopt` is told, as values; the subcommand checks the same rules again. */
export const adoptionValuesSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'Run the adoption Job on install and on every upgrade (it converges: a rerun changes nothing).' }),
    className: optionalName('The IPAddressClass that serves the adopted addresses (created if absent); required when enabled.'),
    pool: optionalName("The admin's IPAddressPool (in metallbNamespace) the class takes over; required unless undo."),
    all: Type.Boolean({ description: 'Adopt every Service holding an address of the pool.' }),
    namespaces: Type.Array(Type.String({ pattern: DNS_LABEL_PATTERN, maxLength: DNS_LABEL_MAX }), {
      description: 'Adopt every LoadBalancer Service of these namespaces.',
    }),
    services: Type.Array(Type.String({ pattern: NAMESPACED_NAME }), { description: 'Adopt these Services, each namespace/name.' }),
    undo: Type.Boolean({ description: "Undo the class's adoption instead: every Service as it was, the generated claims and addresses gone." }),
    dryRun: Type.Boolean({ description: 'Print the plan in the Job\u2019s log and write nothing.' }),
    timeoutSeconds: Type.Integer({ minimum: 1, description: 'How long each step waits for the controllers.' }),
  },
  {
    additionalProperties: false,
    description: "Adoption of an admin's IPAddressPool and the Services holding its addresses, by a Job (docs/adoption.md).",
    allOf: [
      { if: { properties: { enabled: { const: true } } }, then: { properties: { className: { minLength: 1, description: 'adoption.enabled needs adoption.className' } } } },
      {
        if: { properties: { enabled: { const: true }, undo: { const: false } } },
        then: {
          properties: { pool: { minLength: 1, description: 'adoption needs adoption.pool unless adoption.undo' } },
          anyOf: [{ properties: { all: { const: true } } }, { properties: { namespaces: { minItems: 1 } } }, { properties: { services: { minItems: 1 } } }],
        },
      },
    ],
  },
);
export type AdoptionValues = Static<typeof adoptionValuesSchema>;

export const ADOPTION_DEFAULTS: AdoptionValues = {
  enabled: false,
  className: '',
  pool: '',
  all: false,
  namespaces: [],
  services: [],
  undo: false,
  dryRun: false,
  timeoutSeconds: 120,
};

/**
 * What adoption and its undo read and write (controllers/metallb-iad/adopt/command.ts):
 * the Services it selects and annotates (any namespace), the quotas it checks,
 * the class it makes or deletes, the pre-bound addresses and their association,
 * the generated claims. No watch: it polls.
 */
export const ADOPTION_RULES: readonly RbacRule[] = [
  { apiGroup: '', resources: ['services'], verbs: ['get', 'list', 'update'] },
  { apiGroup: '', resources: ['resourcequotas'], verbs: ['list'] },
  { apiGroup: GROUP, resources: ['ipaddressclasses'], verbs: ['get', 'create', 'delete'] },
  { apiGroup: GROUP, resources: ['ipaddresses', 'ipaddressclaims'], verbs: ['get', 'list', 'create', 'delete'] },
  { apiGroup: GROUP, resources: ['ipaddresses/status'], verbs: ['update'] },
];

/** Reading the admin's pools, in MetalLB's namespace only. */
export const ADOPTION_POOL_RULES: readonly RbacRule[] = [{ apiGroup: 'metallb.io', resources: ['ipaddresspools'], verbs: ['get', 'list'] }];

/** The values the Job reads beyond `adoption`. */
interface JobValues {
  image: { repository: string; tag: string; pullPolicy: string };
  imagePullSecrets: { name: string }[];
  controller: ControllerValues;
  metallbNamespace: string;
  adoption: AdoptionValues;
}

export interface AdoptionJobProps {
  /** The driver chart's name; the Job, its ServiceAccount and roles are `<name>-adopt`. */
  readonly chartName: string;
}

/** The adopter's name: `<chart>-adopt` (its ServiceAccount, roles and Job). */
export const adopterName = (chartName: string) => `${chartName}-adopt`;

export class AdoptionJob extends Construct {
  constructor(chart: HelmChart<TObject>, id: string, props: AdoptionJobProps) {
    super(chart, id);
    const v = valuesOf<JobValues>();
    const name = adopterName(props.chartName);
    const labels = { ...commonLabels(name), 'app.kubernetes.io/component': 'adoption' };
    const namespace = Helm.str(Release.namespace);
    const file = chart.addTemplate('adoption.yaml', { when: v('adoption.enabled') });

    templatedObject<V1ServiceAccount>(file, 'ServiceAccount', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace, labels } });
    const identity = { name, serviceAccountName: name, serviceAccountNamespace: namespace, labels };
    new ControllerClusterRbac(file, 'ClusterRbac', { ...identity, rules: ADOPTION_RULES });
    new ControllerNamespacedRbac(file, 'PoolRbac', { ...identity, namespace: Helm.str(v('metallbNamespace')), rules: ADOPTION_POOL_RULES });

    const list = (values: HelmOperand<readonly string[]>) => Pipeline.join(',', values);
    const basics = controllerPodBasics();
    templatedObject<V1Job>(file, 'Job', {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name,
        namespace,
        labels,
        annotations: {
          // After the release's own objects (the ServiceAccount and roles above), on install and every upgrade.
          'helm.sh/hook': 'post-install,post-upgrade',
          // The last run's Job and Pod stay for its log until the next run replaces them.
          'helm.sh/hook-delete-policy': 'before-hook-creation',
        },
      },
      spec: {
        // A wait that ran out (exit 1) is worth another try; bad values (exit 2) are not.
        backoffLimit: 3,
        podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { containerName: 'adopt', operator: 'In', values: [2] } }] },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: name,
            automountServiceAccountToken: true,
            restartPolicy: 'Never',
            // The driver's image, hardening and placement: where the driver may run, the adopter may.
            // Its resources are the driver's too: it holds at most what the driver's informers hold.
            ...basics.pod,
            containers: [
              {
                name: 'adopt',
                ...basics.container,
                args: [
                  'adopt',
                  Helm.printf('--class=%s', v('adoption.className')),
                  Helm.when(v('adoption.pool'), Helm.printf('--pool=%s', v('adoption.pool'))),
                  Helm.when(v('adoption.all'), '--all'),
                  Helm.when(v('adoption.namespaces'), Helm.str(Pipeline.printf('--namespace=%s', list(v('adoption.namespaces'))))),
                  Helm.when(v('adoption.services'), Helm.str(Pipeline.printf('--service=%s', list(v('adoption.services'))))),
                  Helm.when(v('adoption.undo'), '--undo'),
                  Helm.when(v('adoption.dryRun'), '--dry-run'),
                  Helm.printf('--metallb-namespace=%s', v('metallbNamespace')),
                  Helm.printf('--timeout=%v', v('adoption.timeoutSeconds')),
                ],
              },
            ],
          },
        },
      },
    });
  }
}
