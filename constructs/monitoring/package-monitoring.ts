/**
 * What a wrapper package adds for Cozystack's monitoring stack: its
 * controller's VMPodScrape and VMRule, each rendered only where the cluster
 * serves that VictoriaMetrics operator kind (as Cozystack's linstor package
 * gates its scrapes), so a cluster without the monitoring stack installs the
 * package unchanged.
 */
import type { TObject } from '@sinclair/typebox';
import type { HelmChart } from '../helm/chart-writer.js';
import { Capabilities, Pipeline, valuesOf } from '../helm/expr.js';
import type { ControllerValues } from '../controller/values.js';
import { ControllerAlertRules, type ControllerAlerts } from './alert-rules.js';
import { ControllerPodScrape } from './pod-scrape.js';
import { VM_POD_SCRAPE_API, VM_RULE_API } from './vm-types.js';

/** The wrapper's templates, named as Cozystack's packages name theirs. */
export const MONITORING_TEMPLATES = {
  scrape: 'podscrape.yaml',
  rules: 'vmrule.yaml',
} as const;

export interface PackageMonitoringProps {
  /** The vendored controller chart: its name is its values key in the wrapper and its pods' name. */
  readonly controller: string;
  readonly alerts: ControllerAlerts;
}

export function addPackageMonitoring(wrapper: HelmChart<TObject>, props: PackageMonitoringProps): void {
  // The wrapper's .Values carries the vendored chart's values under its name, its defaults merged in.
  const vendored = valuesOf<Record<string, { controller: ControllerValues }>>();
  const metricsPort = vendored(`${props.controller}.controller.metricsPort`);
  const leaderElect = vendored(`${props.controller}.controller.leaderElect`);

  // metricsPort 0 turns the endpoint off: nothing to scrape.
  const scrape = wrapper.addTemplate(MONITORING_TEMPLATES.scrape, { when: Pipeline.and(Capabilities.hasApi(VM_POD_SCRAPE_API), metricsPort) });
  new ControllerPodScrape(scrape, 'Scrape', { controller: props.controller });

  const rules = wrapper.addTemplate(MONITORING_TEMPLATES.rules, { when: Capabilities.hasApi(VM_RULE_API) });
  new ControllerAlertRules(rules, 'Rules', { alerts: props.alerts, leaderElection: leaderElect });
}
