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
import { CLASS_ACCESS_POLICY_NAME, ClassAccessPolicy } from './class-access-policy.js';
import { CLASS_READER_ROLE, CLASS_READERS_GROUP, ClassReaderRole, ClassReaders, TenantAccessRoles } from './tenant-roles.js';
import { COZYSTACK_TRUSTED_GROUPS, trustedCallersSchema } from './trusted-callers.js';
import { classAccessSuites, operatorInstallSuite, tenantRoleSuite, VAP_API } from './unit-tests.js';
import { Capabilities, valuesOf } from '../helm/expr.js';
import { vendoredChartValues, WrapperChart } from './wrapper-chart.js';

export const addressControllerPackageValuesSchema = Type.Object(
  {
    [ADDRESS_CONTROLLER]: vendoredChartValues(ADDRESS_CONTROLLER),
    classAccess: Type.Object(
      {
        trustedCallers: trustedCallersSchema(
          "Who may create a claim for a class its namespace may not use (the class's spec.namespaceSelector): the core still judges the claim, which waits (ClassNotAllowed).",
        ),
        tenantsReadClasses: Type.Boolean({
          description: `Bind ClusterRole ${CLASS_READER_ROLE} (read IPAddressClasses) to ${CLASS_READERS_GROUP}, so tenants see which classes they may use and how much is free.`,
        }),
      },
      { additionalProperties: false, description: 'Who may draw from which class (docs/access.md).' },
    ),
  },
  { additionalProperties: false },
);
export type AddressControllerPackageValues = Static<typeof addressControllerPackageValuesSchema>;

export function addressControllerPackageDefaults(): AddressControllerPackageValues {
  return {
    [ADDRESS_CONTROLLER]: { image: imageValues(IMAGES.addressController) },
    classAccess: {
      trustedCallers: { usernames: [], groups: [...COZYSTACK_TRUSTED_GROUPS], serviceAccounts: [] },
      tenantsReadClasses: true,
    },
  };
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
    const v = valuesOf<AddressControllerPackageValues>();
    new ClassReaderRole(this.addTemplate('class-reader-clusterrole.yaml'), 'ClassReaderRole');
    new ClassReaders(this.addTemplate('class-reader-binding.yaml', { when: v('classAccess.tenantsReadClasses') }), 'ClassReaders');
    new ClassAccessPolicy(this.addTemplate('class-access-policy.yaml', { when: Capabilities.hasApi(VAP_API) }), 'ClassAccessPolicy', {
      trustedCallers: {
        usernames: v('classAccess.trustedCallers.usernames'),
        groups: v('classAccess.trustedCallers.groups'),
        serviceAccounts: v('classAccess.trustedCallers.serviceAccounts'),
      },
    });
    const release = { name: INSTALL.addressController.releaseName, namespace: INSTALL.addressController.namespace };
    this.addUnitTests('tenant-clusterroles_test.yaml', [tenantRoleSuite(release)]);
    this.addUnitTests('class-access_test.yaml', classAccessSuites(release, CLASS_ACCESS_POLICY_NAME, CLASS_READER_ROLE));
    this.addUnitTests('address-controller_test.yaml', [operatorInstallSuite(ADDRESS_CONTROLLER, values[ADDRESS_CONTROLLER], release, [])]);
    addPackageMonitoring(this, { controller: ADDRESS_CONTROLLER, alerts: CORE_ALERTS });
    this.addUnitTests('monitoring_test.yaml', monitoringSuites(ADDRESS_CONTROLLER, CORE_ALERTS, release));
  }
}
