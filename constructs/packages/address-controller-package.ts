/** packages/system/address-controller: the core, with tenant access to claims. */
import { Type, type Static } from '@sinclair/typebox';
import type { TObject } from '@sinclair/typebox';
import type { Construct } from 'constructs';
import { ADDRESS_CONTROLLER } from '../charts/address-controller.js';
import type { HelmChart } from '../helm/chart-writer.js';
import { defineValues } from '../helm/values.js';
import { IMAGES, imageValues } from '../images.js';
import { INSTALL } from './sources.js';
import { TenantAccessRoles } from './tenant-roles.js';
import { vendoredChartValues, WrapperChart } from './wrapper-chart.js';

export const addressControllerPackageValuesSchema = Type.Object(
  { [ADDRESS_CONTROLLER]: vendoredChartValues(ADDRESS_CONTROLLER) },
  { additionalProperties: false },
);

export function addressControllerPackageDefaults(): Static<typeof addressControllerPackageValuesSchema> {
  return { [ADDRESS_CONTROLLER]: { image: imageValues(IMAGES.addressController) } };
}

export class AddressControllerPackage extends WrapperChart<typeof addressControllerPackageValuesSchema> {
  constructor(scope: Construct, id: string, upstream: HelmChart<TObject>) {
    super(scope, id, {
      dir: INSTALL.addressController.dir,
      upstream,
      values: defineValues(addressControllerPackageValuesSchema, addressControllerPackageDefaults()),
    });
    new TenantAccessRoles(this.addTemplate('tenant-clusterroles.yaml'), 'TenantRoles');
  }
}
