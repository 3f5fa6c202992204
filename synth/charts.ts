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

export interface ChartEntry {
  readonly name: string;
  readonly values: ValuesDefinition;
  /** Builds the chart with fully merged, validated values. */
  create(scope: Construct, values: unknown): HelmChart<TObject>;
}

export const UPSTREAM_CHARTS: readonly ChartEntry[] = [
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
