/** packages/system/metallb-iad: the MetalLB driver, in cozy-metallb, with the annotation fence. */
import { Type, type Static, type TObject } from '@sinclair/typebox';
import type { Construct } from 'constructs';
import { METALLB_IAD } from '../charts/metallb-iad.js';
import type { HelmChart } from '../helm/chart-writer.js';
import { Capabilities, Pipeline, Release, valuesOf } from '../helm/expr.js';
import { defineValues } from '../helm/values.js';
import { IMAGES, imageValues } from '../images.js';
import { MetallbAddressPolicy } from './metallb-address-policy.js';
import { INSTALL } from './sources.js';
import { vendoredChartValues, WrapperChart } from './wrapper-chart.js';

/** Cozystack runs MetalLB in cozy-metallb, not upstream's metallb-system. */
export const COZY_METALLB_NAMESPACE = 'cozy-metallb';

const NAME = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

export const metallbIadPackageValuesSchema = Type.Object(
  {
    [METALLB_IAD]: vendoredChartValues(METALLB_IAD),
    admissionPolicy: Type.Object(
      {
        driverServiceAccount: Type.Object(
          {
            namespace: Type.Union([Type.Literal(''), Type.String({ pattern: NAME, maxLength: 63 })], {
              description: 'Namespace of the driver ServiceAccount; empty means the release namespace.',
            }),
            name: Type.String({ pattern: NAME, maxLength: 253, description: 'Name of the driver ServiceAccount.' }),
          },
          { additionalProperties: false, description: 'The one identity allowed to pin MetalLB addresses in tenant namespaces.' },
        ),
      },
      { additionalProperties: false, description: 'The ValidatingAdmissionPolicy fencing MetalLB address annotations.' },
    ),
  },
  { additionalProperties: false },
);
type PackageValues = Static<typeof metallbIadPackageValuesSchema>;

export function metallbIadPackageDefaults(): PackageValues {
  return {
    [METALLB_IAD]: { image: imageValues(IMAGES.metallbIad), metallbNamespace: COZY_METALLB_NAMESPACE },
    admissionPolicy: { driverServiceAccount: { namespace: '', name: METALLB_IAD } },
  };
}

export class MetallbIadPackage extends WrapperChart<typeof metallbIadPackageValuesSchema> {
  constructor(scope: Construct, id: string, upstream: HelmChart<TObject>) {
    super(scope, id, {
      dir: INSTALL.metallbIad.dir,
      upstream,
      values: defineValues(metallbIadPackageValuesSchema, metallbIadPackageDefaults()),
    });
    const v = valuesOf<PackageValues>();
    // ValidatingAdmissionPolicy is GA in admissionregistration.k8s.io/v1 from Kubernetes 1.30.
    const file = this.addTemplate('metallb-address-policy.yaml', {
      when: Capabilities.hasApi('admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy'),
    });
    new MetallbAddressPolicy(file, 'Policy', {
      driverNamespace: Pipeline.orDefault(v('admissionPolicy.driverServiceAccount.namespace'), Release.namespace),
      driverServiceAccount: v('admissionPolicy.driverServiceAccount.name'),
    });
  }
}
