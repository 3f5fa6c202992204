/** The upstream chart of the core: CRDs plus the class-agnostic address-controller. */
import type { Static } from '@sinclair/typebox';
import type { Construct } from 'constructs';
import { KINDS } from '../../api/v1alpha1/schema/index.js';
import { GROUP } from '../../api/v1alpha1/group.js';
import { ControllerChart } from '../controller/controller-chart.js';
import type { RbacRule } from '../controller/rbac.js';
import { controllerDefaults, controllerValuesSchema } from '../controller/values.js';
import { CustomResourceDefinition } from '../crd/custom-resource-definition.js';
import { defineValues } from '../helm/values.js';
import { IMAGES, type ImagePin } from '../images.js';
import { RELEASE_VERSION } from '../version.js';

export const ADDRESS_CONTROLLER = 'address-controller';

export const addressControllerValuesSchema = controllerValuesSchema({});

/**
 * What the core does (docs/binding.md): binds, protects and
 * reclaims, judging who may draw from a class (docs/access.md). It never
 * creates IPAddresses and never touches Services.
 */
export const ADDRESS_CONTROLLER_RULES: readonly RbacRule[] = [
  { apiGroup: '', resources: ['events'], verbs: ['create', 'patch'] },
  // Their labels only: which classes a namespace's claims may draw from (docs/access.md).
  { apiGroup: '', resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
  { apiGroup: GROUP, resources: ['ipaddressclasses'], verbs: ['get', 'list', 'watch'] },
  { apiGroup: GROUP, resources: ['ipaddressclaims'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
  { apiGroup: GROUP, resources: ['ipaddresses'], verbs: ['get', 'list', 'watch', 'update', 'patch', 'delete'] },
  { apiGroup: GROUP, resources: ['ipaddressclaims/status', 'ipaddresses/status'], verbs: ['get', 'update', 'patch'] },
  { apiGroup: GROUP, resources: ['ipaddressclaims/finalizers', 'ipaddresses/finalizers'], verbs: ['update'] },
];

export type AddressControllerValues = Static<typeof addressControllerValuesSchema>;

export function addressControllerDefaults(image: ImagePin = IMAGES.addressController): AddressControllerValues {
  return controllerDefaults(image);
}

export interface AddressControllerChartProps {
  /**
   * The values written to values.yaml.
   * @default addressControllerDefaults()
   */
  readonly values?: AddressControllerValues;
}

export class AddressControllerChart extends ControllerChart<typeof addressControllerValuesSchema> {
  constructor(scope: Construct, id: string, props: AddressControllerChartProps = {}) {
    super(scope, id, {
      name: ADDRESS_CONTROLLER,
      version: RELEASE_VERSION,
      appVersion: RELEASE_VERSION,
      description: 'IP addresses as a first-class resource: CRDs and the class-agnostic binding controller',
      kubeVersion: '>=1.29.0-0',
      keywords: ['ipam', 'networking', 'cozystack'],
      values: defineValues(addressControllerValuesSchema, props.values ?? addressControllerDefaults()),
      clusterRules: ADDRESS_CONTROLLER_RULES,
    });
    for (const definition of KINDS) {
      const file = this.addCrdFile(`${definition.group}_${definition.plural}.yaml`);
      new CustomResourceDefinition(file, definition.kind, { definition });
    }
  }
}
