/** The PackageSources of the two packages (packages/core/platform/sources/*.yaml). */
import type { PackageSourceDefinition } from '../platform/package-source.js';
import { ADDRESS_CONTROLLER_PACKAGE, METALLB, METALLB_IAD_PACKAGE } from '../platform/variants.js';

/** Where each package installs. */
export const INSTALL = {
  addressController: { dir: 'address-controller', namespace: 'cozy-address-controller', releaseName: 'address-controller' },
  metallbIad: { dir: 'metallb-iad', namespace: 'cozy-metallb-iad', releaseName: 'metallb-iad' },
} as const;

export const ADDRESS_CONTROLLER_SOURCE: PackageSourceDefinition = {
  name: ADDRESS_CONTROLLER_PACKAGE,
  variants: [
    {
      name: 'default',
      components: [
        {
          name: 'address-controller',
          path: `system/${INSTALL.addressController.dir}`,
          install: {
            namespace: INSTALL.addressController.namespace,
            releaseName: INSTALL.addressController.releaseName,
            // The CRD schema only grows within v1alpha1, so replacing on upgrade is safe.
            upgradeCRDs: 'CreateReplace',
          },
        },
      ],
    },
  ],
};

export const METALLB_IAD_SOURCE: PackageSourceDefinition = {
  name: METALLB_IAD_PACKAGE,
  variants: [
    {
      name: 'default',
      dependsOn: [ADDRESS_CONTROLLER_PACKAGE, METALLB],
      components: [
        {
          name: 'metallb-iad',
          path: `system/${INSTALL.metallbIad.dir}`,
          install: { namespace: INSTALL.metallbIad.namespace, releaseName: INSTALL.metallbIad.releaseName },
        },
      ],
    },
  ],
};

export const ADDRESS_PACKAGE_SOURCES: readonly PackageSourceDefinition[] = [ADDRESS_CONTROLLER_SOURCE, METALLB_IAD_SOURCE];
