/**
 * The alert rules each package ships as a VMRule, evaluated by Cozystack's
 * vmalert (its VMAlert selects every VMRule). The core's cover claims and the
 * core itself; the driver's cover its classes, MetalLB and the driver.
 *
 * Every controller may run several replicas and every replica exports the
 * same gauges from its caches, so each rule aggregates with `max by` the
 * labels it reports: one alert per class, never one per pod. Tested with
 * vmalert-tool in test/constructs/monitoring/alert-rules.test.ts.
 */
import { Construct } from 'constructs';
import { Helm, HelmOperand, Release, type Templated } from '../helm/expr.js';
import { templatedObject } from '../helm/templated-object.js';
import { JOBS, METRICS, SCRAPE_METRICS, selector, type Job } from './metric-names.js';
import { VM_GROUP_VERSION, type AlertingRule, type RuleGroup, type VMRule } from './vm-types.js';

/** How long a claim may wait before it is reported (issue 23). */
export const PENDING_CLAIM_SECONDS = 600;
/** The share of a class's addresses in use above which it is reported as almost full. */
export const ALMOST_FULL_RATIO = 0.9;

/** A rule and the condition, if any, under which the package renders it. */
export interface ShippedRule {
  readonly rule: AlertingRule;
  /**
   * `leaderElection`: only while the controller elects a leader; without a
   * Lease no replica ever reports leader_election_master_status.
   * @default always rendered
   */
  readonly only?: 'leaderElection';
}

export interface ControllerAlerts {
  /** The VMRule's name, `alerts-<controller>` as Cozystack names its own (alerts-kubeovn-plunger). */
  readonly name: string;
  /** The rule group; vmalert labels each alert with it as `alertgroup`. */
  readonly group: string;
  readonly rules: readonly ShippedRule[];
}

const core = (labels: Readonly<Record<string, string>> = {}) => ({ job: JOBS.core, ...labels });
const driver = (labels: Readonly<Record<string, string>> = {}) => ({ job: JOBS.driver, ...labels });

/** Down and not leading, for either controller. */
function controllerHealth(job: Job, prefix: string): ShippedRule[] {
  const up = selector(SCRAPE_METRICS.up, { job });
  const leader = selector(METRICS.leaderElectionMasterStatus, { job });
  return [
    {
      rule: {
        alert: `${prefix}Down`,
        // Cozystack's own *Down alerts read the same way: no replica scraped successfully, or none left to scrape.
        expr: `absent(${up} == 1)`,
        for: '5m',
        labels: { severity: 'critical' },
        annotations: {
          summary: `${job} is down`,
          description: `No ${job} replica has answered a scrape for 5 minutes: IP address claims and classes are not reconciled.`,
        },
      },
    },
    {
      rule: {
        alert: `${prefix}NotLeading`,
        // A replica reports the gauge only once it holds the Lease (a standby reports nothing).
        expr: `max by (job) (${up}) == 1 unless on (job) max by (job) (${leader}) == 1`,
        for: '5m',
        labels: { severity: 'critical' },
        annotations: {
          summary: `${job} has no leader`,
          description: `${job} replicas are up but none has held the leader Lease for 5 minutes, so none reconciles.`,
        },
      },
      only: 'leaderElection',
    },
  ];
}

/** The core's rules: claims, and the core itself. */
export const CORE_ALERTS: ControllerAlerts = {
  name: `alerts-${JOBS.core}`,
  group: JOBS.core,
  rules: [
    {
      rule: {
        alert: 'IPAddressClaimPending',
        // The age counts every claim not Bound; the Pending count keeps a class whose only old claim is Lost out.
        expr:
          `max by (class) (${selector(METRICS.claimPendingOldestSeconds, core())}) > ${PENDING_CLAIM_SECONDS}` +
          ` and on (class) max by (class) (${selector(METRICS.claims, core({ phase: 'Pending' }))}) > 0`,
        labels: { severity: 'warning' },
        annotations: {
          summary: 'An IP address claim has been pending for over 10 minutes',
          description:
            'The oldest claim {{ if $labels.class }}of IPAddressClass "{{ $labels.class }}"{{ else }}that no class resolved for{{ end }} ' +
            'has waited {{ $value | humanizeDuration }} without an address. kubectl get ipclaim -A shows its conditions.',
        },
      },
    },
    {
      rule: {
        alert: 'IPAddressClaimLost',
        expr: `max by (class) (${selector(METRICS.claims, core({ phase: 'Lost' }))}) > 0`,
        for: '2m',
        labels: { severity: 'warning' },
        annotations: {
          summary: 'An IP address claim lost its address',
          description: '{{ $value }} claim(s) of IPAddressClass "{{ $labels.class }}" are Lost: the address they were bound to is gone.',
        },
      },
    },
    ...controllerHealth(JOBS.core, 'AddressController'),
  ],
};

const capacity = `max by (class, family) (${selector(METRICS.classCapacity, driver())})`;
const free = `max by (class, family) (${selector(METRICS.classFree, driver())})`;

/** The driver's rules: its classes' books, MetalLB, and the driver itself. */
export const DRIVER_ALERTS: ControllerAlerts = {
  name: `alerts-${JOBS.driver}`,
  group: JOBS.driver,
  rules: [
    {
      rule: {
        alert: 'IPAddressClassAlmostFull',
        // A class whose ranges hold nothing has no share to compute.
        expr: `(${capacity} - ${free}) / (${capacity} > 0) > ${ALMOST_FULL_RATIO}`,
        for: '10m',
        labels: { severity: 'warning' },
        annotations: {
          summary: 'An IP address class is over 90% used',
          description: 'IPAddressClass "{{ $labels.class }}" has {{ $value | humanizePercentage }} of its {{ $labels.family }} addresses in use.',
        },
      },
    },
    {
      rule: {
        alert: 'IPAddressClassExhausted',
        expr: `${free} == 0 and on (class) max by (class) (${selector(METRICS.claims, { job: JOBS.core, phase: 'Pending' })}) > 0`,
        for: '2m',
        labels: { severity: 'critical' },
        annotations: {
          summary: 'An IP address class is exhausted while claims wait',
          description:
            'IPAddressClass "{{ $labels.class }}" has no free {{ $labels.family }} address and claims of it are Pending: ' +
            'widen its ranges or free addresses.',
        },
      },
    },
    {
      rule: {
        alert: 'IPAddressConflict',
        expr: `max by (class, family) (${selector(METRICS.classAddresses, driver({ phase: 'Conflict' }))}) > 0`,
        for: '2m',
        labels: { severity: 'warning' },
        annotations: {
          summary: 'An IP address is in Conflict',
          description:
            '{{ $value }} {{ $labels.family }} address(es) of IPAddressClass "{{ $labels.class }}" are in Conflict: ' +
            'something outside the driver holds them in MetalLB.',
        },
      },
    },
    {
      rule: {
        alert: 'IPAddressLost',
        expr: `max by (class, family) (${selector(METRICS.classAddresses, driver({ phase: 'Lost' }))}) > 0`,
        for: '2m',
        labels: { severity: 'warning' },
        annotations: {
          summary: 'An IP address is Lost',
          description: '{{ $value }} {{ $labels.family }} address(es) of IPAddressClass "{{ $labels.class }}" are Lost.',
        },
      },
    },
    {
      rule: {
        alert: 'IPAddressClassBackendNotReady',
        expr: `max by (class) (${selector(METRICS.classBackendReady, driver())}) == 0`,
        for: '5m',
        labels: { severity: 'warning' },
        annotations: {
          summary: "An IP address class's MetalLB pool is not ready",
          description:
            'The MetalLB pool of IPAddressClass "{{ $labels.class }}" is not written as the class says: ' +
            'kubectl get ipclass {{ $labels.class }} -o yaml shows the BackendReady condition.',
        },
      },
    },
    {
      rule: {
        alert: 'MetalLBConfigurationInvalid',
        expr: `max by (namespace) (${selector(METRICS.metallbConfigurationValid, driver())}) == 0`,
        for: '5m',
        labels: { severity: 'critical' },
        annotations: {
          summary: 'MetalLB refuses its configuration',
          description:
            'MetalLB in {{ $labels.namespace }} reports its configuration invalid: no change to any pool, ' +
            "the driver's included, takes effect until it is fixed.",
        },
      },
    },
    ...controllerHealth(JOBS.driver, 'MetallbIad'),
  ],
};

/** Every rule either package ships, with the controller that ships it. */
export const ALL_ALERTS: readonly ControllerAlerts[] = [CORE_ALERTS, DRIVER_ALERTS];

export interface ControllerAlertRulesProps {
  readonly alerts: ControllerAlerts;
  /** Truthy while the controller elects a leader (its chart's `controller.leaderElect`). */
  readonly leaderElection: HelmOperand<boolean>;
}

/** The VMRule of one controller's alerts. */
export class ControllerAlertRules extends Construct {
  constructor(scope: Construct, id: string, props: ControllerAlertRulesProps) {
    super(scope, id);
    const rules = props.alerts.rules.map(({ rule, only }): Templated<AlertingRule> =>
      only === 'leaderElection' ? Helm.when<AlertingRule>(props.leaderElection, escapeRule(rule)) : escapeRule(rule),
    );
    templatedObject<VMRule>(this, 'Resource', {
      apiVersion: VM_GROUP_VERSION,
      kind: 'VMRule',
      metadata: {
        name: props.alerts.name,
        namespace: Helm.str(Release.namespace),
        labels: { 'app.kubernetes.io/part-of': 'cozy-addresses' },
      },
      spec: { groups: [{ name: props.alerts.group, rules }] },
    });
  }
}

/**
 * vmalert's annotation templates (`{{ $labels.class }}`) pass through Helm as a
 * Go string literal, which Helm prints and never parses as an action.
 */
function escapeRule(rule: AlertingRule): Templated<AlertingRule> {
  const literal = (text: string): Templated<string> => (text.includes('{{') ? Helm.str(new HelmOperand<string>(JSON.stringify(text))) : text);
  return { ...rule, annotations: { summary: literal(rule.annotations.summary), description: literal(rule.annotations.description) } };
}

/** The rules as vmalert reads them once rendered (a rule file's groups). */
export function ruleGroups(alerts: ControllerAlerts, options: { leaderElection: boolean }): RuleGroup[] {
  const rules = alerts.rules.filter(({ only }) => only !== 'leaderElection' || options.leaderElection).map(({ rule }) => rule);
  return [{ name: alerts.group, rules }];
}
