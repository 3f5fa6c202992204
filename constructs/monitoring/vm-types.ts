/**
 * The parts of the VictoriaMetrics operator's objects
 * (operator.victoriametrics.com/v1beta1) these packages write. No typed model
 * of them ships with @kubernetes/client-node, so only the fields used are typed.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';

export const VM_GROUP_VERSION = 'operator.victoriametrics.com/v1beta1';
/** `.Capabilities.APIVersions.Has` keys: the kinds these templates render. */
export const VM_POD_SCRAPE_API = `${VM_GROUP_VERSION}/VMPodScrape`;
export const VM_RULE_API = `${VM_GROUP_VERSION}/VMRule`;

export interface RelabelConfig {
  readonly action?: 'replace' | 'keep' | 'drop' | 'labeldrop' | 'labelkeep';
  readonly sourceLabels?: readonly string[];
  readonly regex?: string;
  readonly targetLabel?: string;
  readonly replacement?: string;
}

export interface PodMetricsEndpoint {
  /** A container port's name. */
  readonly port: string;
  readonly path?: string;
  readonly scheme?: 'http' | 'https';
  readonly relabelConfigs?: readonly RelabelConfig[];
}

export interface VMPodScrape {
  apiVersion: typeof VM_GROUP_VERSION;
  kind: 'VMPodScrape';
  metadata: V1ObjectMeta;
  spec: {
    podMetricsEndpoints: PodMetricsEndpoint[];
    selector: { matchLabels: Record<string, string> };
  };
}

export interface AlertingRule {
  readonly alert: string;
  readonly expr: string;
  /** How long the expression must hold before the alert fires; none fires at once. */
  readonly for?: string;
  readonly labels: { readonly severity: 'warning' | 'critical' };
  readonly annotations: { readonly summary: string; readonly description: string };
}

export interface RuleGroup {
  readonly name: string;
  readonly rules: readonly AlertingRule[];
}

export interface VMRule {
  apiVersion: typeof VM_GROUP_VERSION;
  kind: 'VMRule';
  metadata: V1ObjectMeta;
  spec: { groups: RuleGroup[] };
}
