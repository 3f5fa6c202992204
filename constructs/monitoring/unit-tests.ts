/**
 * helm-unittest suites of a wrapper's monitoring templates
 * (tests/monitoring_test.yaml): the capability gates, the scrape's target and
 * labels, and the rules exactly as vmalert will read them, written from the
 * same definitions the templates are.
 */
import { OPERATOR_VALUES, type Release } from '../packages/unit-tests.js';
import type { UnitTestSuite } from '../packages/unit-test-suite.js';
import { ruleGroups, type ControllerAlerts } from './alert-rules.js';
import { MONITORING_TEMPLATES } from './package-monitoring.js';
import { SCRAPE_TIER } from './pod-scrape.js';
import { VM_POD_SCRAPE_API, VM_RULE_API } from './vm-types.js';

const scrapeTemplate = `templates/${MONITORING_TEMPLATES.scrape}`;
const rulesTemplate = `templates/${MONITORING_TEMPLATES.rules}`;

export function monitoringSuites(controller: string, alerts: ControllerAlerts, release: Release): UnitTestSuite[] {
  const templates = [scrapeTemplate, rulesTemplate];
  const vendored = (key: string) => `${controller}.controller.${key}`;
  return [
    {
      suite: `${controller}: scrape and alert rules where the VictoriaMetrics operator is served`,
      templates,
      release,
      set: OPERATOR_VALUES,
      capabilities: { apiVersions: [VM_POD_SCRAPE_API, VM_RULE_API] },
      tests: [
        {
          it: 'scrapes the controller pods of this release on their metrics port',
          template: scrapeTemplate,
          asserts: [
            { isKind: { of: 'VMPodScrape' } },
            { equal: { path: 'metadata.name', value: controller } },
            { equal: { path: 'metadata.namespace', value: release.namespace } },
            { equal: { path: 'spec.selector.matchLabels', value: { 'app.kubernetes.io/name': controller, 'app.kubernetes.io/instance': release.name } } },
            { equal: { path: 'spec.podMetricsEndpoints[0].port', value: 'metrics' } },
            { equal: { path: 'spec.podMetricsEndpoints[0].path', value: '/metrics' } },
          ],
        },
        {
          it: `labels the series job=${controller} and tier=${SCRAPE_TIER}, as Cozystack's scrapes do`,
          template: scrapeTemplate,
          asserts: [
            { contains: { path: 'spec.podMetricsEndpoints[0].relabelConfigs', content: { targetLabel: 'job', replacement: controller } } },
            { contains: { path: 'spec.podMetricsEndpoints[0].relabelConfigs', content: { targetLabel: 'tier', replacement: SCRAPE_TIER } } },
          ],
        },
        {
          it: `ships the ${alerts.group} rules, vmalert's templates intact`,
          template: rulesTemplate,
          asserts: [
            { isKind: { of: 'VMRule' } },
            { equal: { path: 'metadata.name', value: alerts.name } },
            { equal: { path: 'metadata.namespace', value: release.namespace } },
            { equal: { path: 'spec.groups', value: ruleGroups(alerts, { leaderElection: true }) } },
          ],
        },
        {
          it: 'leaves out the not-leading rule when the controller elects no leader',
          template: rulesTemplate,
          set: { [vendored('leaderElect')]: false },
          asserts: [{ equal: { path: 'spec.groups', value: ruleGroups(alerts, { leaderElection: false }) } }],
        },
        {
          it: 'scrapes nothing when the metrics endpoint is off (metricsPort 0)',
          template: scrapeTemplate,
          set: { [vendored('metricsPort')]: 0 },
          asserts: [{ hasDocuments: { count: 0 } }],
        },
      ],
    },
    {
      suite: `${controller}: no scrape and no rules where the VictoriaMetrics operator is not served`,
      templates,
      release,
      set: OPERATOR_VALUES,
      capabilities: { apiVersions: [] },
      tests: [
        { it: 'renders no VMPodScrape without operator.victoriametrics.com/v1beta1', template: scrapeTemplate, asserts: [{ hasDocuments: { count: 0 } }] },
        { it: 'renders no VMRule without operator.victoriametrics.com/v1beta1', template: rulesTemplate, asserts: [{ hasDocuments: { count: 0 } }] },
      ],
    },
  ];
}
