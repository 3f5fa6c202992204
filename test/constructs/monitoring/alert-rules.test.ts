/**
 * The shipped alert rules, run by VictoriaMetrics' own rule test tool
 * (`vmalert-tool unittest`, built from its Go module by
 * hack/monitoring/build-vmalert-tool.sh): the VMRules as helm renders them from
 * the synthesized packages, input series that must fire and series that must
 * not, every alert's labels and annotations compared exactly; and every query
 * of the shipped dashboard, evaluated by the same tool over a cluster's series.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ALL_ALERTS, CORE_ALERTS, DRIVER_ALERTS, ruleGroups, type ControllerAlerts } from '../../../constructs/monitoring/alert-rules.js';
import { DASHBOARDS } from '../../../constructs/monitoring/dashboard.js';
import { JOBS, METRICS, SCRAPE_METRICS, type MetricDefinition } from '../../../constructs/monitoring/metric-names.js';
import { VM_RULE_API } from '../../../constructs/monitoring/vm-types.js';
import { INSTALL } from '../../../constructs/packages/sources.js';
import { renderChart } from '../../support/helm.js';
import { REPO_ROOT, synthesizedArtifact } from '../../support/synth.js';

/** Builds (once, cached under .cache/tools) or finds the tool; a test run without it fails. */
function vmalertTool(): string {
  const result = spawnSync('bash', [join(REPO_ROOT, 'hack/monitoring/build-vmalert-tool.sh')], { encoding: 'utf8', timeout: 900_000 });
  if (result.status !== 0) {
    throw new Error(`hack/monitoring/build-vmalert-tool.sh failed (${result.status ?? result.signal}): ${result.stderr}`);
  }
  return result.stdout.trim();
}

type Labels = Readonly<Record<string, string>>;
interface InputSeries {
  readonly series: string;
  readonly values: string;
}
interface AlertTest {
  readonly eval_time: string;
  readonly groupname: string;
  readonly alertname: string;
  readonly exp_alerts: readonly { exp_labels: Labels; exp_annotations?: Labels }[];
}
interface Case {
  readonly it: string;
  readonly input: readonly InputSeries[];
  readonly expect: readonly AlertTest[];
}

/** A series in the tool's notation; pods a and b stand for two replicas exporting the same gauges. */
function series(metric: MetricDefinition, labels: Labels, values: string, pods: readonly string[] = ['a']): InputSeries[] {
  const job = labels.job ?? metric.exportedBy[0]!;
  return pods.map((pod) => {
    const all = { job, ...labels, pod };
    return { series: `${metric.name}{${Object.entries(all).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')}}`, values };
  });
}

const ruleOf = (alertname: string) => ALL_ALERTS.flatMap((a) => a.rules.map((r) => ({ group: a.group, rule: r.rule }))).find((r) => r.rule.alert === alertname)!;

interface Firing {
  readonly labels: Labels;
  /** The annotations as vmalert expands them; may be left out only where the rule's have no template. */
  readonly annotations?: Labels;
}

/** At `time`, exactly these alerts of that name fire (none: it must stay silent). */
function at(time: string, alertname: string, firing: readonly Firing[] = []): AlertTest {
  const { group, rule } = ruleOf(alertname);
  return {
    eval_time: time,
    groupname: group,
    alertname,
    exp_alerts: firing.map((f) => {
      const annotations = f.annotations ?? rule.annotations;
      if (Object.values(annotations).some((a) => a.includes('{{'))) {
        throw new Error(`${alertname}: spell out the expanded annotations`);
      }
      return { exp_labels: { ...f.labels, severity: rule.labels.severity }, exp_annotations: annotations };
    }),
  };
}

const core = JOBS.core;
const driver = JOBS.driver;
const bothPods = ['a', 'b'];

/** A healthy cluster's series: two replicas of each controller, one class in use. */
const HEALTHY: readonly InputSeries[] = [
  ...series(SCRAPE_METRICS.up, { job: core }, '1x20', bothPods),
  ...series(SCRAPE_METRICS.up, { job: driver }, '1x20', bothPods),
  ...series(METRICS.leaderElectionMasterStatus, { job: core, name: core }, '1x20'),
  ...series(METRICS.leaderElectionMasterStatus, { job: driver, name: driver }, '1x20'),
  ...series(METRICS.claims, { class: 'public', phase: 'Bound' }, '5x20', bothPods),
  ...series(METRICS.claims, { class: 'public', phase: 'Pending' }, '1x20', bothPods),
  ...series(METRICS.claimPendingOldestSeconds, { class: 'public' }, '30x20', bothPods),
  ...series(METRICS.classCapacity, { class: 'public', family: 'IPv4' }, '16x20', bothPods),
  ...series(METRICS.classFree, { class: 'public', family: 'IPv4' }, '10x20', bothPods),
  ...series(METRICS.classAddresses, { class: 'public', family: 'IPv4', phase: 'Bound' }, '5x20', bothPods),
  ...series(METRICS.classAddresses, { class: 'public', family: 'IPv4', phase: 'Conflict' }, '0x20', bothPods),
  ...series(METRICS.classAddresses, { class: 'public', family: 'IPv4', phase: 'Lost' }, '0x20', bothPods),
  ...series(METRICS.classBackendReady, { class: 'public' }, '1x20', bothPods),
  ...series(METRICS.holds, { class: 'public' }, '1x20', bothPods),
  ...series(METRICS.attachments, { class: 'public' }, '4x20', bothPods),
  ...series(METRICS.metallbConfigurationValid, { namespace: 'cozy-metallb' }, '1x20', bothPods),
];

const CASES: readonly Case[] = [
  // The core: claims.
  {
    it: 'IPAddressClaimPending fires once a Pending claim is over 10 minutes old, once per class across replicas, with its age',
    input: [
      ...series(METRICS.claimPendingOldestSeconds, { class: 'public' }, '0+60x20', bothPods),
      ...series(METRICS.claims, { class: 'public', phase: 'Pending' }, '1x20', bothPods),
    ],
    expect: [
      at('9m', 'IPAddressClaimPending'),
      at('11m', 'IPAddressClaimPending', [
        {
          labels: { class: 'public' },
          annotations: {
            summary: 'An IP address claim has been pending for over 10 minutes',
            description:
              'The oldest claim of IPAddressClass "public" has waited 11m 0s without an address. kubectl get ipclaim -A shows its conditions.',
          },
        },
      ]),
    ],
  },
  {
    it: 'IPAddressClaimPending covers claims no class resolved for (class "")',
    // prom-client writes class=""; an empty label is no label once scraped.
    input: [...series(METRICS.claimPendingOldestSeconds, {}, '0+60x20'), ...series(METRICS.claims, { phase: 'Pending' }, '1x20')],
    expect: [at('12m', 'IPAddressClaimPending', [
        {
          labels: {},
          annotations: {
            summary: 'An IP address claim has been pending for over 10 minutes',
            description: 'The oldest claim that no class resolved for has waited 12m 0s without an address. kubectl get ipclaim -A shows its conditions.',
          },
        },
      ])],
  },
  {
    it: 'IPAddressClaimPending stays silent for a young claim, and for a class whose only old claim is Lost',
    input: [
      ...series(METRICS.claimPendingOldestSeconds, { class: 'fresh' }, '0+30x20'),
      ...series(METRICS.claims, { class: 'fresh', phase: 'Pending' }, '1x20'),
      ...series(METRICS.claimPendingOldestSeconds, { class: 'edge' }, '900x20'),
      ...series(METRICS.claims, { class: 'edge', phase: 'Pending' }, '0x20'),
      ...series(METRICS.claims, { class: 'edge', phase: 'Lost' }, '1x20'),
    ],
    expect: [at('15m', 'IPAddressClaimPending')],
  },
  {
    it: 'IPAddressClaimLost fires after a claim has been Lost for 2 minutes, not for Bound or Pending claims',
    input: [
      ...series(METRICS.claims, { class: 'public', phase: 'Lost' }, '0 0 1x10', bothPods),
      ...series(METRICS.claims, { class: 'edge', phase: 'Lost' }, '0x12'),
      ...series(METRICS.claims, { class: 'edge', phase: 'Bound' }, '3x12'),
      ...series(METRICS.claims, { class: 'edge', phase: 'Pending' }, '1x12'),
    ],
    expect: [
      at('3m', 'IPAddressClaimLost'),
      at('5m', 'IPAddressClaimLost', [
        {
          labels: { class: 'public' },
          annotations: {
            summary: 'An IP address claim lost its address',
            description: '1 claim(s) of IPAddressClass "public" are Lost: the address they were bound to is gone.',
          },
        },
      ]),
    ],
  },

  // The driver: classes and MetalLB.
  {
    it: 'IPAddressClassAlmostFull fires above 90 % used, per class and family; not at 90 %, not for an empty class or a roomy IPv6 one',
    input: [
      ...series(METRICS.classCapacity, { class: 'edge', family: 'IPv4' }, '20x20', bothPods),
      ...series(METRICS.classFree, { class: 'edge', family: 'IPv4' }, '1x20', bothPods),
      ...series(METRICS.classCapacity, { class: 'public', family: 'IPv4' }, '10x20'),
      ...series(METRICS.classFree, { class: 'public', family: 'IPv4' }, '1x20'),
      ...series(METRICS.classCapacity, { class: 'empty', family: 'IPv4' }, '0x20'),
      ...series(METRICS.classFree, { class: 'empty', family: 'IPv4' }, '0x20'),
      ...series(METRICS.classCapacity, { class: 'edge', family: 'IPv6' }, '18446744073709551616x20'),
      ...series(METRICS.classFree, { class: 'edge', family: 'IPv6' }, '18446744073709551000x20'),
    ],
    expect: [
      at('9m', 'IPAddressClassAlmostFull'),
      at('11m', 'IPAddressClassAlmostFull', [
        {
          labels: { class: 'edge', family: 'IPv4' },
          annotations: {
            summary: 'An IP address class is over 90% used',
            description: 'IPAddressClass "edge" has 95% of its IPv4 addresses in use.',
          },
        },
      ]),
    ],
  },
  {
    it: 'IPAddressClassExhausted fires for a class with no free address while its claims wait; not without waiters, not with room',
    input: [
      ...series(METRICS.classFree, { class: 'full', family: 'IPv4' }, '0x10', bothPods),
      ...series(METRICS.claims, { job: core, class: 'full', phase: 'Pending' }, '2x10', bothPods),
      ...series(METRICS.classFree, { class: 'quiet', family: 'IPv4' }, '0x10'),
      ...series(METRICS.claims, { job: core, class: 'quiet', phase: 'Pending' }, '0x10'),
      ...series(METRICS.claims, { job: core, class: 'quiet', phase: 'Bound' }, '5x10'),
      ...series(METRICS.classFree, { class: 'roomy', family: 'IPv4' }, '5x10'),
      ...series(METRICS.claims, { job: core, class: 'roomy', phase: 'Pending' }, '1x10'),
    ],
    expect: [
      at('1m', 'IPAddressClassExhausted'),
      at('3m', 'IPAddressClassExhausted', [
        {
          labels: { class: 'full', family: 'IPv4' },
          annotations: {
            summary: 'An IP address class is exhausted while claims wait',
            description: 'IPAddressClass "full" has no free IPv4 address and claims of it are Pending: widen its ranges or free addresses.',
          },
        },
      ]),
    ],
  },
  {
    it: 'IPAddressConflict fires on any address in Conflict, not on other phases',
    input: [
      ...series(METRICS.classAddresses, { class: 'public', family: 'IPv4', phase: 'Conflict' }, '0 0 1x10', bothPods),
      ...series(METRICS.classAddresses, { class: 'public', family: 'IPv4', phase: 'Bound' }, '3x12'),
      ...series(METRICS.classAddresses, { class: 'edge', family: 'IPv6', phase: 'Conflict' }, '0x12'),
      ...series(METRICS.classAddresses, { class: 'edge', family: 'IPv6', phase: 'Lost' }, '1x12'),
    ],
    expect: [
      at('3m', 'IPAddressConflict'),
      at('5m', 'IPAddressConflict', [
        {
          labels: { class: 'public', family: 'IPv4' },
          annotations: {
            summary: 'An IP address is in Conflict',
            description: '1 IPv4 address(es) of IPAddressClass "public" are in Conflict: something outside the driver holds them in MetalLB.',
          },
        },
      ]),
    ],
  },
  {
    it: 'IPAddressLost fires on any Lost address, not on other phases',
    input: [
      ...series(METRICS.classAddresses, { class: 'edge', family: 'IPv6', phase: 'Lost' }, '2x12', bothPods),
      ...series(METRICS.classAddresses, { class: 'public', family: 'IPv4', phase: 'Lost' }, '0x12'),
      ...series(METRICS.classAddresses, { class: 'public', family: 'IPv4', phase: 'Conflict' }, '1x12'),
      ...series(METRICS.classAddresses, { class: 'public', family: 'IPv4', phase: 'Released' }, '4x12'),
    ],
    expect: [
      at('3m', 'IPAddressLost', [
        {
          labels: { class: 'edge', family: 'IPv6' },
          annotations: { summary: 'An IP address is Lost', description: '2 IPv6 address(es) of IPAddressClass "edge" are Lost.' },
        },
      ]),
    ],
  },
  {
    it: 'IPAddressClassBackendNotReady fires after 5 minutes of a class whose pool is not ready, not for ready ones',
    input: [...series(METRICS.classBackendReady, { class: 'broken' }, '1 1 0x10', bothPods), ...series(METRICS.classBackendReady, { class: 'fine' }, '1x12')],
    expect: [at('6m', 'IPAddressClassBackendNotReady'), at('8m', 'IPAddressClassBackendNotReady', [
        {
          labels: { class: 'broken' },
          annotations: {
            summary: "An IP address class's MetalLB pool is not ready",
            description:
              'The MetalLB pool of IPAddressClass "broken" is not written as the class says: kubectl get ipclass broken -o yaml shows the BackendReady condition.',
          },
        },
      ])],
  },
  {
    it: 'MetalLBConfigurationInvalid fires while MetalLB refuses its configuration, with its namespace',
    input: series(METRICS.metallbConfigurationValid, { namespace: 'cozy-metallb' }, '0x10', bothPods),
    expect: [
      at('4m', 'MetalLBConfigurationInvalid'),
      at('6m', 'MetalLBConfigurationInvalid', [
        {
          labels: { namespace: 'cozy-metallb' },
          annotations: {
            summary: 'MetalLB refuses its configuration',
            description:
              "MetalLB in cozy-metallb reports its configuration invalid: no change to any pool, the driver's included, takes effect until it is fixed.",
          },
        },
      ]),
    ],
  },
  {
    it: 'MetalLBConfigurationInvalid stays silent while MetalLB reports valid, and while it reports nothing',
    input: [...series(METRICS.metallbConfigurationValid, { namespace: 'cozy-metallb' }, '1x10'), ...series(SCRAPE_METRICS.up, { job: driver }, '1x20')],
    expect: [at('10m', 'MetalLBConfigurationInvalid')],
  },

  // Both controllers: down and not leading.
  ...(
    [
      [core, 'AddressController'],
      [driver, 'MetallbIad'],
    ] as const
  ).flatMap(([job, prefix]): Case[] => [
    {
      it: `${prefix}Down fires 5 minutes after the last replica stops answering`,
      input: series(SCRAPE_METRICS.up, { job }, '1 1 0x20'),
      expect: [at('6m', `${prefix}Down`), at('8m', `${prefix}Down`, [{ labels: {} }])],
    },
    {
      it: `${prefix}Down fires when no target is left to scrape`,
      input: series(SCRAPE_METRICS.up, { job: job === core ? driver : core }, '1x20'),
      expect: [at('6m', `${prefix}Down`, [{ labels: {} }])],
    },
    {
      it: `${prefix}Down stays silent while one replica of two answers`,
      input: [...series(SCRAPE_METRICS.up, { job }, '0x20', ['a']), ...series(SCRAPE_METRICS.up, { job }, '1x20', ['b'])],
      expect: [at('10m', `${prefix}Down`)],
    },
    {
      it: `${prefix}NotLeading fires when replicas answer but none holds the Lease`,
      input: series(SCRAPE_METRICS.up, { job }, '1x20', bothPods),
      expect: [at('4m', `${prefix}NotLeading`), at('6m', `${prefix}NotLeading`, [{ labels: { job } }])],
    },
    {
      it: `${prefix}NotLeading stays silent while one replica leads, and while none answers (${prefix}Down says so)`,
      input: [
        ...series(SCRAPE_METRICS.up, { job }, '1x20', bothPods),
        ...series(METRICS.leaderElectionMasterStatus, { job, name: job }, '1x20', ['a']),
        ...series(SCRAPE_METRICS.up, { job: job === core ? driver : core }, '0x20'),
      ],
      expect: [
        at('10m', `${prefix}NotLeading`),
        at('10m', `${job === core ? 'MetallbIad' : 'AddressController'}NotLeading`),
        at('10m', `${job === core ? 'MetallbIad' : 'AddressController'}Down`, [{ labels: {} }]),
      ],
    },
  ]),

  {
    it: 'a healthy cluster fires nothing',
    input: HEALTHY,
    expect: ALL_ALERTS.flatMap((a) => a.rules.map((r) => at('20m', r.rule.alert))),
  },
];

describe('the alert rules under vmalert-tool unittest', () => {
  let tool = '';
  let dir = '';
  let ruleFiles: string[] = [];

  beforeAll(() => {
    tool = vmalertTool();
    dir = mkdtempSync(join(tmpdir(), 'cozy-addresses-alerts-'));
    // The rules as the cluster gets them: helm renders each package's VMRule where the API is served.
    const packages: readonly (readonly [{ readonly dir: string; readonly namespace: string }, ControllerAlerts])[] = [
      [INSTALL.addressController, CORE_ALERTS],
      [INSTALL.metallbIad, DRIVER_ALERTS],
    ];
    ruleFiles = packages.map(([install, alerts]) => {
      const chart = join(synthesizedArtifact(), 'packages', 'system', install.dir);
      const objects = renderChart(chart, '--namespace', install.namespace, '--api-versions', VM_RULE_API, '--show-only', 'templates/vmrule.yaml');
      const rules = objects.filter((o) => o.kind === 'VMRule');
      expect(rules.map((r) => r.metadata.name)).toEqual([alerts.name]);
      const file = join(dir, `${alerts.name}.yaml`);
      writeFileSync(file, stringify({ groups: (rules[0]!.spec as { groups: unknown }).groups }));
      return file;
    });
  }, 900_000);

  it('the rendered VMRules hold exactly the rules defined in constructs/monitoring/alert-rules.ts', () => {
    for (const [file, alerts] of [
      [ruleFiles[0]!, CORE_ALERTS],
      [ruleFiles[1]!, DRIVER_ALERTS],
    ] as const) {
      expect(parse(readFileSync(file, 'utf8'))).toEqual({ groups: ruleGroups(alerts, { leaderElection: true }) });
    }
  });

  it('every alert has a case that fires it and one that keeps it silent', () => {
    const names = ALL_ALERTS.flatMap((a) => a.rules.map((r) => r.rule.alert));
    const tests = CASES.flatMap((c) => c.expect);
    expect(names.filter((n) => !tests.some((t) => t.alertname === n && t.exp_alerts.length > 0))).toEqual([]);
    expect(names.filter((n) => !tests.some((t) => t.alertname === n && t.exp_alerts.length === 0))).toEqual([]);
  });

  it.each(CASES.map((c) => [c.it, c] as const))('%s', (_name, testCase) => {
    const file = join(dir, `${CASES.indexOf(testCase)}_test.yaml`);
    writeFileSync(
      file,
      stringify({
        rule_files: ruleFiles,
        evaluation_interval: '1m',
        tests: [{ name: testCase.it, interval: '1m', input_series: testCase.input, alert_rule_test: testCase.expect }],
      }),
    );
    const result = spawnSync(tool, ['unittest', `--files=${file}`], { encoding: 'utf8', timeout: 120_000 });
    expect(`${result.stdout}${result.stderr}`).toContain('SUCCESS');
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
  });

  it("every dashboard query parses as MetricsQL and returns series from a running cluster's metrics", () => {
    // Grafana's variables at their widest: every class, a 5-minute rate window.
    const queries = DASHBOARDS.flatMap((d) => d.json.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr.replaceAll('$__rate_interval', '5m').replaceAll('$class', '.*'))));
    const rules = join(dir, 'dashboard-queries.yaml');
    writeFileSync(rules, stringify({ groups: [{ name: 'dashboard', rules: queries.map((expr, i) => ({ record: `dashboard:query_${i}`, expr })) }] }));
    const file = join(dir, 'dashboard_test.yaml');
    writeFileSync(
      file,
      stringify({
        rule_files: [rules],
        evaluation_interval: '1m',
        tests: [
          {
            name: 'dashboard queries',
            interval: '1m',
            input_series: [
              ...HEALTHY,
              // Counters appear once incremented; a cluster that has reconciled and failed once has them all.
              ...series(METRICS.backendFailures, { class: 'public' }, '0+1x20'),
              // A class with a per-namespace limit, one namespace's claims against it.
              ...series(METRICS.classNamespaceLimit, { class: 'public' }, '2x20', bothPods),
              ...series(METRICS.classNamespaceClaims, { class: 'public', namespace: 'tenant-a' }, '1x20', bothPods),
              ...[core, driver].flatMap((job) => [
                ...series(METRICS.reconcileTotal, { job, controller: 'claims', result: 'success' }, '0+10x20', bothPods),
                ...series(METRICS.reconcileErrors, { job, controller: 'claims' }, '0+1x20', bothPods),
                ...series(METRICS.workqueueDepth, { job, name: 'claims' }, '0x20', bothPods),
              ]),
            ],
            metricsql_expr_test: queries.map((_, i) => ({ expr: `count(dashboard:query_${i}) > bool 0`, eval_time: '15m', exp_samples: [{ labels: '{}', value: 1 }] })),
          },
        ],
      }),
    );
    const result = spawnSync(tool, ['unittest', `--files=${file}`], { encoding: 'utf8', timeout: 120_000 });
    expect(`${result.stdout}${result.stderr}`).toContain('SUCCESS');
    expect(result.status).toBe(0);
  });
});
