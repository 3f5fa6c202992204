/**
 * The typo test: every metric a shipped rule or dashboard panel queries is one a
 * controller exports, with labels it sets; and the contract in
 * constructs/monitoring/metric-names.ts is what the controllers register.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerCoreMetrics } from '../../../controllers/address-controller/metrics.js';
import { registerDriverMetrics } from '../../../controllers/metallb-iad/metrics.js';
import { ControllerMetrics } from '../../../controllers/runtime/metrics.js';
import { ALL_ALERTS, ruleGroups } from '../../../constructs/monitoring/alert-rules.js';
import { DASHBOARDS, type Panel } from '../../../constructs/monitoring/dashboard.js';
import { JOBS, METRICS, SCRAPE_METRICS, TARGET_LABELS, type Job, type MetricDefinition } from '../../../constructs/monitoring/metric-names.js';
import { synthesize } from '../../../synth/artifact.js';
import { selectors } from '../../support/promql.js';

/** What a controller process registers: the runtime's metrics plus its own, as its main.ts wires them. */
function registered(job: Job): Map<string, { type: string; labels: string[] }> {
  const runtime = new ControllerMetrics().registry;
  const own = new Registry();
  if (job === JOBS.core) {
    registerCoreMetrics(own, () => [], () => []);
  } else {
    registerDriverMetrics(own, { metallbNamespace: 'cozy-metallb', allClasses: () => [], addressesOfClass: () => [], placeholdersOf: () => [], poolNamed: () => undefined, configurationStates: () => [] });
  }
  const out = new Map<string, { type: string; labels: string[] }>();
  for (const metric of [...runtime.getMetricsAsArray(), ...own.getMetricsAsArray()]) {
    // prom-client keeps a metric's label names on the instance; its typings leave them out.
    const labels = (metric as unknown as { labelNames?: readonly string[] }).labelNames ?? [];
    out.set(metric.name, { type: String(metric.type), labels: [...labels].sort() });
  }
  return out;
}

const exported = new Map<Job, ReturnType<typeof registered>>([
  [JOBS.core, registered(JOBS.core)],
  [JOBS.driver, registered(JOBS.driver)],
]);
const contract = new Map<string, MetricDefinition>([...Object.values(METRICS), ...Object.values(SCRAPE_METRICS)].map((m) => [m.name, m]));

/** What the shipped dashboards query, read back from the JSON synth writes. */
const files = synthesize();
const dashboardQueries = DASHBOARDS.flatMap((d) => {
  const json = JSON.parse(files.get(`dashboards/${d.group}/${d.name}.json`) as string) as { panels: Panel[]; templating: { list: { query?: unknown }[] } };
  const panels = json.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
  const variables = json.templating.list.flatMap((v) => (typeof v.query === 'object' && v.query !== null ? [String((v.query as { query: string }).query)] : []));
  return [
    ...panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `${d.group}/${d.name}: ${p.title}`, expr: t.expr }))),
    ...variables.map((query) => ({ where: `${d.group}/${d.name}: variable`, expr: query.replace(/^label_values\((.*), *\w+\)$/, '$1') })),
  ];
});
const ruleQueries = ALL_ALERTS.flatMap((alerts) =>
  ruleGroups(alerts, { leaderElection: true }).flatMap((g) => g.rules.map((r) => ({ where: `${alerts.name}: ${r.alert}`, expr: r.expr }))),
);

/** The problems of one expression: unknown metrics, labels nobody sets, a job that does not export the metric. */
function problems(expr: string): string[] {
  return selectors(expr).flatMap(({ name, matchers }) => {
    const definition = contract.get(name);
    if (!definition) {
      return [`${name || '(no name)'}: no controller exports it`];
    }
    const known = new Set<string>([...definition.labels, ...TARGET_LABELS]);
    return matchers.flatMap((m) => {
      if (!known.has(m.label)) {
        return [`${name}{${m.label}}: no such label`];
      }
      if (m.label === 'job' && m.op === '=' && !(definition.exportedBy as readonly string[]).includes(m.value)) {
        return [`${name}{job="${m.value}"}: that controller does not export it`];
      }
      return [];
    });
  });
}

describe('the metrics contract', () => {
  it.each(Object.values(METRICS).flatMap((m) => m.exportedBy.map((job) => [m.name, job, m] as const)))('%s is registered by %s', (_name, job, definition) => {
    const metric = exported.get(job)!.get(definition.name);
    expect(metric, `${job} registers no ${definition.name}`).toBeDefined();
    expect(metric!.type).toBe(definition.type);
    expect(metric!.labels).toEqual([...definition.labels].sort());
  });

  it('names every cozy_addresses_ metric a controller registers', () => {
    const registeredNames = [...exported.values()].flatMap((m) => [...m.keys()]).filter((n) => n.startsWith('cozy_addresses_'));
    expect(registeredNames.filter((n) => !contract.has(n))).toEqual([]);
  });
});

describe('every query of a shipped rule or panel reads the contract', () => {
  it('finds the queries: every rule and panel', () => {
    expect(ruleQueries.length).toBe(ALL_ALERTS.reduce((n, a) => n + a.rules.length, 0));
    expect(dashboardQueries.length).toBeGreaterThan(15);
  });

  it.each([...ruleQueries, ...dashboardQueries].map((q) => [q.where, q.expr]))('%s', (_where, expr) => {
    expect(selectors(expr).length).toBeGreaterThan(0);
    expect(problems(expr)).toEqual([]);
  });

  it('every metric of the contract is read by a rule or a panel', () => {
    const read = new Set([...ruleQueries, ...dashboardQueries].flatMap((q) => selectors(q.expr).map((s) => s.name)));
    expect([...contract.keys()].filter((name) => !read.has(name))).toEqual([]);
  });
});

describe('the scanner catches what it is for', () => {
  it('reports a misspelt metric, a misspelt label and a wrong job', () => {
    expect(problems('max by (class) (cozy_addreses_claims{job="address-controller"}) > 0')).toEqual(['cozy_addreses_claims: no controller exports it']);
    expect(problems('cozy_addresses_claims{clas="x"}')).toEqual(['cozy_addresses_claims{clas}: no such label']);
    expect(problems('cozy_addresses_class_free{job="address-controller"} == 0')).toEqual([
      'cozy_addresses_class_free{job="address-controller"}: that controller does not export it',
    ]);
  });

  it('reads names and matchers through aggregations, functions, modifiers, ranges, strings and Grafana variables', () => {
    const expr =
      'sum by (class, phase) (rate(controller_runtime_reconcile_total{job=~"a|b", result!="x"}[$__rate_interval])) ' +
      '/ on (class) group_left (family) max without (pod) (up offset 5m) and absent({__name__="workqueue_depth", name="q"}) > bool 0.9';
    expect(selectors(expr)).toEqual([
      {
        name: 'controller_runtime_reconcile_total',
        matchers: [
          { label: 'job', op: '=~', value: 'a|b' },
          { label: 'result', op: '!=', value: 'x' },
        ],
      },
      { name: 'up', matchers: [] },
      { name: 'workqueue_depth', matchers: [{ label: 'name', op: '=', value: 'q' }] },
    ]);
  });
});
