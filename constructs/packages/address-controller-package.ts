/** packages/system/address-controller: the core, with tenant access to claims. */
import { Type, type Static } from '@sinclair/typebox';
import type { TObject } from '@sinclair/typebox';
import type { Construct } from 'constructs';
import { ADDRESS_CONTROLLER } from '../charts/address-controller.js';
import type { HelmChart } from '../helm/chart-writer.js';
import { defineValues } from '../helm/values.js';
import { IMAGES, imageValues } from '../images.js';
import { CORE_ALERTS } from '../monitoring/alert-rules.js';
import { addPackageMonitoring } from '../monitoring/package-monitoring.js';
import { monitoringSuites } from '../monitoring/unit-tests.js';
import { INSTALL } from './sources.js';
import { TenantAccessRoles } from './tenant-roles.js';
import { operatorInstallSuite, tenantRoleSuite } from './unit-tests.js';
import { vendoredChartValues, WrapperChart } from './wrapper-chart.js';

export const addressControllerPackageValuesSchema = Type.Object(
  { [ADDRESS_CONTROLLER]: vendoredChartValues(ADDRESS_CONTROLLER) },
  { additionalProperties: false },
);
export type AddressControllerPackageValues = Static<typeof addressControllerPackageValuesSchema>;

export function addressControllerPackageDefaults(): AddressControllerPackageValues {
  return { [ADDRESS_CONTROLLER]: { image: imageValues(IMAGES.addressController) } };
}

export class AddressControllerPackage extends WrapperChart<typeof addressControllerPackageValuesSchema> {
  constructor(
    scope: Construct,
    id: string,
    upstream: HelmChart<TObject>,
    values: AddressControllerPackageValues = addressControllerPackageDefaults(),
  ) {
    super(scope, id, {
      dir: INSTALL.addressController.dir,
      namespace: INSTALL.addressController.namespace,
      upstream,
      values: defineValues(addressControllerPackageValuesSchema, values),
    });
    new TenantAccessRoles(this.addTemplate('tenant-clusterroles.yaml'), 'TenantRoles');
    const release = { name: INSTALL.addressController.releaseName, namespace: INSTALL.addressController.namespace };
    this.addUnitTests('tenant-clusterroles_test.yaml', [tenantRoleSuite(release)]);
    this.addUnitTests('address-controller_test.yaml', [operatorInstallSuite(ADDRESS_CONTROLLER, values[ADDRESS_CONTROLLER], release, [])]);
    addPackageMonitoring(this, { controller: ADDRESS_CONTROLLER, alerts: CORE_ALERTS });
    this.addUnitTests('monitoring_test.yaml', monitoringSuites(ADDRESS_CONTROLLER, CORE_ALERTS, release));
  }
}
