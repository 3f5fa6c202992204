/** The recommended Kubernetes labels, with the release-dependent ones as Helm placeholders. */
import { ChartInfo, Helm, Release, chartLabel, type Templated } from '../helm/expr.js';

/** Labels that select the controller's pods; stable for the life of a release. */
export function selectorLabels(name: string): Record<string, Templated<string>> {
  return {
    'app.kubernetes.io/name': name,
    'app.kubernetes.io/instance': Helm.str(Release.name),
  };
}

/** Labels on every object of a controller chart. */
export function commonLabels(name: string): Record<string, Templated<string>> {
  return {
    ...selectorLabels(name),
    'app.kubernetes.io/component': 'controller',
    'app.kubernetes.io/part-of': 'cozy-addresses',
    'app.kubernetes.io/version': Helm.str(ChartInfo.appVersion),
    'app.kubernetes.io/managed-by': Helm.str(Release.service),
    'helm.sh/chart': Helm.str(chartLabel),
  };
}
