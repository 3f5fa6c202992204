/**
 * A VMPodScrape of one controller, in the shape of Cozystack's own
 * (packages/system/linstor/templates/podscrape.yaml, the kube-ovn-plunger
 * scrape): the controller charts run no Service, their pods name the
 * container port `metrics`, so vmagent scrapes the pods directly.
 */
import { Construct } from 'constructs';
import { Helm, Release } from '../helm/expr.js';
import { templatedObject } from '../helm/templated-object.js';
import { selectorLabels } from '../controller/labels.js';
import { VM_GROUP_VERSION, type VMPodScrape } from './vm-types.js';

/** Cozystack's label for platform-level targets, next to the tenants' own. */
export const SCRAPE_TIER = 'cluster';

export interface ControllerPodScrapeProps {
  /** The controller: its pods' `app.kubernetes.io/name`, the object's name and the series' `job`. */
  readonly controller: string;
  /**
   * The container port serving /metrics, by name.
   * @default 'metrics' (constructs/controller/deployment.ts)
   */
  readonly port?: string;
  /**
   * The metrics path.
   * @default '/metrics'
   */
  readonly path?: string;
}

export class ControllerPodScrape extends Construct {
  constructor(scope: Construct, id: string, props: ControllerPodScrapeProps) {
    super(scope, id);
    templatedObject<VMPodScrape>(this, 'Resource', {
      apiVersion: VM_GROUP_VERSION,
      kind: 'VMPodScrape',
      metadata: {
        name: props.controller,
        namespace: Helm.str(Release.namespace),
        labels: { 'app.kubernetes.io/name': props.controller, 'app.kubernetes.io/part-of': 'cozy-addresses' },
      },
      spec: {
        podMetricsEndpoints: [
          {
            port: props.port ?? 'metrics',
            path: props.path ?? '/metrics',
            scheme: 'http',
            relabelConfigs: [
              // The driver's cozy_addresses_metallb_configuration_valid carries MetalLB's namespace
              // as `namespace`; the target's own would rename it to exported_namespace.
              // The pod stays: it tells which replica leads.
              { action: 'labeldrop', regex: '(endpoint|namespace|container)' },
              { targetLabel: 'job', replacement: props.controller },
              { targetLabel: 'tier', replacement: SCRAPE_TIER },
            ],
          },
        ],
        selector: { matchLabels: selectorLabels(props.controller) },
      },
    });
  }
}
