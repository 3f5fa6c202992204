/**
 * The Grafana dashboard of the address books, shipped as Cozystack ships its
 * dashboards: `dashboards/<group>/<name>.json` in the Cozystack tree (baked into
 * the grafana-dashboards image) plus a `<group>/<name>` line in
 * packages/system/monitoring/dashboards-infra.list, which the monitoring
 * package turns into a GrafanaDashboard named `<group>-<name>` in folder
 * `<group>`. Infra, not per tenant: classes and their capacity are the
 * cluster's, so it shows in tenant-root's Grafana only.
 *
 * The JSON follows Cozystack's own dashboards (dashboards/tenants/overview.json):
 * a `ds_prometheus` datasource variable, every panel and query reading it.
 */
import { ALMOST_FULL_RATIO, PENDING_CLAIM_SECONDS } from './alert-rules.js';
import { JOBS, METRICS, SCRAPE_METRICS, selector, type MetricDefinition } from './metric-names.js';

export interface ShippedDashboard {
  /** The folder under dashboards/ and the Grafana folder. */
  readonly group: string;
  readonly name: string;
  readonly json: GrafanaDashboard;
}

/** The list the dashboard's line belongs in: infra dashboards render in tenant-root and cozy-monitoring only. */
export const DASHBOARDS_LIST = 'dashboards-infra.list';

const DATASOURCE = { type: 'prometheus', uid: '$ds_prometheus' } as const;

interface Target {
  readonly expr: string;
  readonly legendFormat?: string;
  /** A single value at the dashboard's end time rather than a range. */
  readonly instant?: boolean;
}

export interface Panel {
  readonly id: number;
  readonly type: 'row' | 'stat' | 'timeseries';
  readonly title: string;
  readonly description?: string;
  readonly gridPos: { readonly x: number; readonly y: number; readonly w: number; readonly h: number };
  readonly datasource?: typeof DATASOURCE;
  readonly targets?: readonly (Target & { readonly refId: string; readonly datasource: typeof DATASOURCE; readonly editorMode: 'code' })[];
  readonly fieldConfig?: unknown;
  readonly options?: unknown;
  readonly collapsed?: boolean;
  readonly panels?: readonly Panel[];
}

export interface GrafanaDashboard {
  readonly uid: string;
  readonly title: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly panels: readonly Panel[];
  readonly templating: { readonly list: readonly unknown[] };
  readonly [key: string]: unknown;
}

interface PanelSpec {
  readonly type: 'stat' | 'timeseries';
  readonly title: string;
  readonly description: string;
  readonly targets: readonly Target[];
  /** Grafana unit. @default 'short' */
  readonly unit?: string;
  /** Width in grid columns (of 24). @default 12 */
  readonly w?: number;
  /** @default 8 for a time series, 4 for a stat */
  readonly h?: number;
  /** A value from which the panel turns red (a stat's colour, a time series' threshold line). @default none */
  readonly redFrom?: number;
  /** Stack the series. @default false */
  readonly stacked?: boolean;
}

/** Lays panels out left to right in rows of 24 columns, each section under a row header. */
class Layout {
  private readonly panels: Panel[] = [];
  private id = 1;
  private x = 0;
  private y = 0;
  private rowHeight = 0;

  section(title: string, specs: readonly PanelSpec[]): this {
    this.newLine();
    this.panels.push({ id: this.id++, type: 'row', title, collapsed: false, panels: [], gridPos: { x: 0, y: this.y, w: 24, h: 1 } });
    this.y += 1;
    for (const spec of specs) {
      const w = spec.w ?? 12;
      const h = spec.h ?? (spec.type === 'stat' ? 4 : 8);
      if (this.x + w > 24) {
        this.newLine();
      }
      this.panels.push(panel(this.id++, spec, { x: this.x, y: this.y, w, h }));
      this.x += w;
      this.rowHeight = Math.max(this.rowHeight, h);
    }
    return this;
  }

  done(): Panel[] {
    return this.panels;
  }

  private newLine(): void {
    this.y += this.rowHeight;
    this.x = 0;
    this.rowHeight = 0;
  }
}

function panel(id: number, spec: PanelSpec, gridPos: Panel['gridPos']): Panel {
  const steps = [{ color: 'green', value: null }, ...(spec.redFrom === undefined ? [] : [{ color: 'red', value: spec.redFrom }])];
  const defaults = {
    color: { mode: spec.type === 'stat' ? 'thresholds' : 'palette-classic' },
    mappings: [],
    thresholds: { mode: 'absolute', steps },
    unit: spec.unit ?? 'short',
    ...(spec.type === 'timeseries'
      ? {
          custom: {
            drawStyle: 'line',
            fillOpacity: spec.stacked ? 25 : 0,
            lineWidth: 1,
            showPoints: 'never',
            spanNulls: true,
            stacking: { group: 'A', mode: spec.stacked ? 'normal' : 'none' },
            thresholdsStyle: { mode: spec.redFrom === undefined ? 'off' : 'line' },
          },
        }
      : {}),
  };
  const options =
    spec.type === 'stat'
      ? { colorMode: 'value', graphMode: 'none', justifyMode: 'auto', orientation: 'auto', reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, textMode: 'auto' }
      : { legend: { calcs: ['lastNotNull', 'max'], displayMode: 'table', placement: 'bottom', showLegend: true }, tooltip: { mode: 'multi', sort: 'desc' } };
  return {
    id,
    type: spec.type,
    title: spec.title,
    description: spec.description,
    gridPos,
    datasource: DATASOURCE,
    targets: spec.targets.map((target, i) => ({ datasource: DATASOURCE, editorMode: 'code', refId: String.fromCharCode(65 + i), ...target })),
    fieldConfig: { defaults, overrides: [] },
    options,
  };
}

/** A selector narrowed to the classes picked in the dashboard's `class` variable. */
const inClasses = (definition: MetricDefinition, labels: Readonly<Record<string, string>> = {}) =>
  selector(definition, [['job', '=', definition.exportedBy[0]!], ['class', '=~', '$class'], ...Object.entries(labels).map(([l, v]) => [l, '=', v] as const)]);
const controllers = (definition: MetricDefinition) => selector(definition, [['job', '=~', `${JOBS.core}|${JOBS.driver}`]]);

const capacity = `max by (class, family) (${inClasses(METRICS.classCapacity)})`;
const free = `max by (class, family) (${inClasses(METRICS.classFree)})`;

export function addressesDashboard(): GrafanaDashboard {
  const panels = new Layout()
    .section('Classes', [
      {
        type: 'timeseries',
        title: 'Used, per class and family',
        description: `Share of each class's addresses recorded (capacity minus free). Alerts above ${ALMOST_FULL_RATIO * 100} %.`,
        targets: [{ expr: `(${capacity} - ${free}) / (${capacity} > 0)`, legendFormat: '{{class}} {{family}}' }],
        unit: 'percentunit',
        redFrom: ALMOST_FULL_RATIO,
      },
      {
        type: 'timeseries',
        title: 'Capacity and in use',
        description: "Addresses each class's ranges hold, and how many of them are recorded.",
        targets: [
          { expr: capacity, legendFormat: '{{class}} {{family}} capacity' },
          { expr: `${capacity} - ${free}`, legendFormat: '{{class}} {{family}} in use' },
        ],
      },
      {
        type: 'timeseries',
        title: 'Free addresses',
        description: 'Addresses MetalLB can still hand out, per class and family. Claims wait once it reaches 0.',
        targets: [{ expr: free, legendFormat: '{{class}} {{family}}' }],
      },
      {
        type: 'timeseries',
        title: 'Addresses by phase',
        description: 'Recorded IPAddresses of the selected classes by phase, both families.',
        targets: [{ expr: `sum by (phase) (max by (class, family, phase) (${inClasses(METRICS.classAddresses)}))`, legendFormat: '{{phase}}' }],
        stacked: true,
      },
      {
        type: 'timeseries',
        title: 'Holds and attachments',
        description: 'Addresses held by a placeholder Service, and addresses associated with a tenant Service.',
        targets: [
          { expr: `max by (class) (${inClasses(METRICS.holds)})`, legendFormat: '{{class}} held' },
          { expr: `max by (class) (${inClasses(METRICS.attachments)})`, legendFormat: '{{class}} attached' },
        ],
        w: 24,
      },
    ])
    .section('Claims', [
      {
        type: 'stat',
        title: 'Pending claims',
        description: 'IPAddressClaims waiting for an address, all selected classes.',
        targets: [{ expr: `sum(max by (class) (${inClasses(METRICS.claims, { phase: 'Pending' })})) or vector(0)`, instant: true }],
        w: 6,
        redFrom: 1,
      },
      {
        type: 'stat',
        title: 'Oldest waiting claim',
        description: `Age of the oldest claim not Bound. Alerts past ${PENDING_CLAIM_SECONDS / 60} minutes.`,
        targets: [{ expr: `max(${inClasses(METRICS.claimPendingOldestSeconds)}) or vector(0)`, instant: true }],
        unit: 's',
        w: 6,
        redFrom: PENDING_CLAIM_SECONDS,
      },
      {
        type: 'stat',
        title: 'Lost claims',
        description: 'Claims whose bound address is gone.',
        targets: [{ expr: `sum(max by (class) (${inClasses(METRICS.claims, { phase: 'Lost' })})) or vector(0)`, instant: true }],
        w: 6,
        redFrom: 1,
      },
      {
        type: 'stat',
        title: 'Bound claims',
        description: 'Claims holding their address.',
        targets: [{ expr: `sum(max by (class) (${inClasses(METRICS.claims, { phase: 'Bound' })})) or vector(0)`, instant: true }],
        w: 6,
      },
      {
        type: 'timeseries',
        title: 'Claims by phase',
        description: 'IPAddressClaims per class and phase (class "" means no class resolved).',
        targets: [{ expr: `max by (class, phase) (${inClasses(METRICS.claims)})`, legendFormat: '{{class}} {{phase}}' }],
      },
      {
        type: 'timeseries',
        title: 'Oldest waiting claim, per class',
        description: 'Age of the oldest claim not Bound, per class.',
        targets: [{ expr: `max by (class) (${inClasses(METRICS.claimPendingOldestSeconds)})`, legendFormat: '{{class}}' }],
        unit: 's',
        redFrom: PENDING_CLAIM_SECONDS,
      },
      {
        type: 'timeseries',
        title: 'Per-namespace limit used, per class',
        description: "For each class with spec.maxClaimsPerNamespace, the share of it each namespace's claims hold (1 = at the limit: the next claim waits, ClassLimitReached).",
        targets: [
          {
            expr: `max by (class, namespace) (${inClasses(METRICS.classNamespaceClaims)}) / on (class) group_left max by (class) (${inClasses(METRICS.classNamespaceLimit)})`,
            legendFormat: '{{class}} {{namespace}}',
          },
        ],
        unit: 'percentunit',
      },
    ])
    .section('Conflicts and the backend', [
      {
        type: 'stat',
        title: 'Addresses in Conflict',
        description: 'Addresses something outside the driver holds in MetalLB.',
        targets: [{ expr: `sum(max by (class, family) (${inClasses(METRICS.classAddresses, { phase: 'Conflict' })})) or vector(0)`, instant: true }],
        w: 6,
        redFrom: 1,
      },
      {
        type: 'stat',
        title: 'Lost addresses',
        description: 'Recorded addresses in phase Lost.',
        targets: [{ expr: `sum(max by (class, family) (${inClasses(METRICS.classAddresses, { phase: 'Lost' })})) or vector(0)`, instant: true }],
        w: 6,
        redFrom: 1,
      },
      {
        type: 'stat',
        title: 'Classes whose backend is not ready',
        description: "Classes whose MetalLB pool is not written as the class says (BackendReady=False).",
        targets: [{ expr: `count(max by (class) (${inClasses(METRICS.classBackendReady)}) == 0) or vector(0)`, instant: true }],
        w: 6,
        redFrom: 1,
      },
      {
        type: 'stat',
        title: 'MetalLB configuration valid',
        description: 'MetalLB reports its configuration valid (1) or refuses it (0); no value while it reports nothing.',
        targets: [{ expr: `min(${selector(METRICS.metallbConfigurationValid, { job: JOBS.driver })})`, instant: true }],
        w: 6,
      },
      {
        type: 'timeseries',
        title: 'Conflict and Lost, per class',
        description: 'Addresses in phase Conflict or Lost, per class and family.',
        targets: [{ expr: `max by (class, family, phase) (${selector(METRICS.classAddresses, [['job', '=', JOBS.driver], ['class', '=~', '$class'], ['phase', '=~', 'Conflict|Lost']])})`, legendFormat: '{{class}} {{family}} {{phase}}' }],
      },
      {
        type: 'timeseries',
        title: 'Backend write failures',
        description: "Failed writes of a class's MetalLB pool or advertisement, per interval.",
        targets: [{ expr: `sum by (class) (increase(${inClasses(METRICS.backendFailures)}[$__rate_interval]))`, legendFormat: '{{class}}' }],
      },
    ])
    .section('Controllers', [
      {
        type: 'timeseries',
        title: 'Up',
        description: 'Whether each controller pod answers its scrape.',
        targets: [{ expr: `max by (job, pod) (${controllers(SCRAPE_METRICS.up)})`, legendFormat: '{{job}} {{pod}}' }],
        w: 8,
      },
      {
        type: 'timeseries',
        title: 'Leader',
        description: 'The pod holding each controller\'s Lease reports 1; a standby reports nothing.',
        targets: [{ expr: `max by (job, pod) (${controllers(METRICS.leaderElectionMasterStatus)})`, legendFormat: '{{job}} {{pod}}' }],
        w: 8,
      },
      {
        type: 'timeseries',
        title: 'Work queue depth',
        description: 'Keys waiting in each reconciler\'s queue.',
        targets: [{ expr: `max by (job, name) (${controllers(METRICS.workqueueDepth)})`, legendFormat: '{{job}} {{name}}' }],
        w: 8,
      },
      {
        type: 'timeseries',
        title: 'Reconciles per second',
        description: 'Reconcile passes by controller and result.',
        targets: [
          { expr: `sum by (job, controller, result) (rate(${controllers(METRICS.reconcileTotal)}[$__rate_interval]))`, legendFormat: '{{job}} {{controller}} {{result}}' },
        ],
        unit: 'ops',
      },
      {
        type: 'timeseries',
        title: 'Reconcile errors per second',
        description: 'Reconcile passes that returned an error.',
        targets: [{ expr: `sum by (job, controller) (rate(${controllers(METRICS.reconcileErrors)}[$__rate_interval]))`, legendFormat: '{{job}} {{controller}}' }],
        unit: 'ops',
        redFrom: 0.001,
      },
    ])
    .done();

  return {
    annotations: {
      list: [
        {
          builtIn: 1,
          datasource: { type: 'grafana', uid: '-- Grafana --' },
          enable: true,
          hide: true,
          iconColor: 'rgba(0, 211, 255, 1)',
          name: 'Annotations & Alerts',
          type: 'dashboard',
        },
      ],
    },
    description:
      'IP addresses as a first-class resource: per-class capacity and use, claims waiting, conflicts and lost addresses, ' +
      'the MetalLB backend, and the health of address-controller and metallb-iad.',
    editable: true,
    fiscalYearStartMonth: 0,
    graphTooltip: 1,
    links: [],
    liveNow: false,
    panels,
    refresh: '1m',
    schemaVersion: 42,
    tags: ['addresses', 'network', 'metallb'],
    templating: {
      list: [
        {
          type: 'datasource',
          name: 'ds_prometheus',
          label: 'Prometheus',
          query: 'prometheus',
          current: { selected: false, text: 'default', value: 'default' },
          hide: 0,
          includeAll: false,
          multi: false,
          regex: '',
          skipUrlSync: false,
        },
        {
          type: 'query',
          name: 'class',
          label: 'Class',
          datasource: DATASOURCE,
          definition: `label_values(${METRICS.classCapacity.name}, class)`,
          query: { query: `label_values(${METRICS.classCapacity.name}, class)`, refId: 'StandardVariableQuery' },
          // .* also matches the claims of no resolved class (class="").
          allValue: '.*',
          current: { selected: true, text: ['All'], value: ['$__all'] },
          hide: 0,
          includeAll: true,
          multi: true,
          options: [],
          refresh: 2,
          regex: '',
          sort: 1,
        },
      ],
    },
    time: { from: 'now-6h', to: 'now' },
    timepicker: {},
    timezone: '',
    title: 'IP Addresses',
    uid: 'cozy-addresses-overview',
    version: 1,
    weekStart: '',
  };
}

/** What synth writes: one dashboard, `addresses/overview`. */
export const DASHBOARDS: readonly ShippedDashboard[] = [{ group: 'addresses', name: 'overview', json: addressesDashboard() }];

/** The files of the dashboards: `dashboards/<group>/<name>.json` and the list of their entries. */
export function dashboardFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const dashboard of DASHBOARDS) {
    files.set(`dashboards/${dashboard.group}/${dashboard.name}.json`, JSON.stringify(dashboard.json, null, 2) + '\n');
  }
  files.set(DASHBOARDS_LIST, DASHBOARDS.map((d) => `${d.group}/${d.name}\n`).join(''));
  return files;
}
