/** The charts synth knows, by the name used in --set and --values. */
import type { TObject } from '@sinclair/typebox';
import type { Construct } from 'constructs';
import {
  ADDRESS_CONTROLLER,
  AddressControllerChart,
  addressControllerDefaults,
  addressControllerValuesSchema,
  type AddressControllerValues,
} from '../constructs/charts/address-controller.js';
import {
  METALLB_IAD,
  MetallbIadChart,
  metallbIadDefaults,
  metallbIadValuesSchema,
  type MetallbIadValues,
} from '../constructs/charts/metallb-iad.js';
import type { HelmChart } from '../constructs/helm/chart-writer.js';
import type { ValuesDefinition } from '../constructs/helm/values.js';
import {
  AddressControllerPackage,
  addressControllerPackageDefaults,
  addressControllerPackageValuesSchema,
  type AddressControllerPackageValues,
} from '../constructs/packages/address-controller-package.js';
import {
  MetallbIadPackage,
  metallbIadPackageDefaults,
  metallbIadPackageValuesSchema,
  type MetallbIadPackageValues,
} from '../constructs/packages/metallb-iad-package.js';
import type { WrapperChart } from '../constructs/packages/wrapper-chart.js';

export interface ChartEntry {
  /** The name --set and --values address: the chart's own name. */
  readonly name: string;
  readonly values: ValuesDefinition;
}

export interface UpstreamChartEntry extends ChartEntry {
  /** Builds the chart with fully merged, validated values. */
  create(scope: Construct, values: unknown): HelmChart<TObject>;
}

export interface PackageChartEntry extends ChartEntry {
  /**
   * The upstream chart the package vendors, under its values key of the same
   * name: every override of that chart also lands there, so what the package
   * renders follows what the vendored chart was synthesized with.
   */
  readonly vendors: string;
  /** Builds the wrapper around the synthesized upstream chart. */
  create(scope: Construct, upstream: HelmChart<TObject>, values: unknown): WrapperChart<TObject>;
}

export const UPSTREAM_CHARTS: readonly UpstreamChartEntry[] = [
  {
    name: ADDRESS_CONTROLLER,
    values: { schema: addressControllerValuesSchema, defaults: addressControllerDefaults() },
    create: (scope, values) =>
      new AddressControllerChart(scope, ADDRESS_CONTROLLER, { values: values as AddressControllerValues }),
  },
  {
    name: METALLB_IAD,
    values: { schema: metallbIadValuesSchema, defaults: metallbIadDefaults() },
    create: (scope, values) => new MetallbIadChart(scope, METALLB_IAD, { values: values as MetallbIadValues }),
  },
];

/** The Cozystack wrappers, addressed by their chart names (`cozy-<dir>`). */
export const PACKAGE_CHARTS: readonly PackageChartEntry[] = [
  {
    name: `cozy-${ADDRESS_CONTROLLER}`,
    vendors: ADDRESS_CONTROLLER,
    values: { schema: addressControllerPackageValuesSchema, defaults: addressControllerPackageDefaults() },
    create: (scope, upstream, values) =>
      new AddressControllerPackage(scope, 'package-address-controller', upstream, values as AddressControllerPackageValues),
  },
  {
    name: `cozy-${METALLB_IAD}`,
    vendors: METALLB_IAD,
    values: { schema: metallbIadPackageValuesSchema, defaults: metallbIadPackageDefaults() },
    create: (scope, upstream, values) =>
      new MetallbIadPackage(scope, 'package-metallb-iad', upstream, values as MetallbIadPackageValues),
  },
];
