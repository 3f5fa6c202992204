/**
 * A Cozystack system package (`packages/system/<dir>/`): an umbrella chart named
 * `cozy-<dir>` at the placeholder version 0.0.0, with the upstream chart
 * vendored verbatim under `charts/` and everything Cozystack-specific in the
 * wrapper's own values.yaml and templates/. Chart.yaml carries Cozystack's
 * three fields plus `dependencies`, which helm lint needs for a vendored chart.
 */
import { Type, type TObject } from '@sinclair/typebox';
import type { Construct } from 'constructs';
import { HelmChart } from '../helm/chart-writer.js';
import type { ValuesDefinition } from '../helm/values.js';

export interface WrapperChartProps<S extends TObject> {
  /** The package directory under packages/system/, e.g. `address-controller`. */
  readonly dir: string;
  /** The upstream chart to vendor. */
  readonly upstream: HelmChart<TObject>;
  /** The wrapper's values: the upstream chart's overrides under its name, plus the wrapper's own keys. */
  readonly values: ValuesDefinition<S>;
}

export class WrapperChart<S extends TObject> extends HelmChart<S> {
  readonly dir: string;

  constructor(scope: Construct, id: string, props: WrapperChartProps<S>) {
    super(scope, id, {
      name: `cozy-${props.dir}`,
      version: '0.0.0',
      versionComment: 'Placeholder: the Cozystack build sets the real version',
      // Listed without a repository: the chart is vendored under charts/, and
      // helm lint rejects a vendored chart the metadata does not name.
      dependencies: [{ name: props.upstream.chartName, version: props.upstream.version }],
      values: props.values,
    });
    this.dir = props.dir;
    this.vendor(props.upstream);
  }
}

/** The wrapper's values key for its vendored chart: open here, the vendored chart's schema applies. */
export function vendoredChartValues(chartName: string) {
  return Type.Object(
    {},
    { additionalProperties: true, description: `Values of the upstream ${chartName} chart. The vendored chart's values.schema.json applies.` },
  );
}
