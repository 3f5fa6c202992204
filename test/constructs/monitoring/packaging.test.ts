/**
 * What ships for the monitoring stack, rendered by the real helm: each
 * package's VMPodScrape and VMRule only where the VictoriaMetrics operator API
 * is served, the scrape selecting the controller's own pods on a port they
 * have; and the dashboard placed as Cozystack places its own.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CORE_ALERTS, DRIVER_ALERTS } from '../../../constructs/monitoring/alert-rules.js';
import { DASHBOARDS, DASHBOARDS_LIST, type Panel } from '../../../constructs/monitoring/dashboard.js';
import { VM_POD_SCRAPE_API, VM_RULE_API } from '../../../constructs/monitoring/vm-types.js';
import { INSTALL } from '../../../constructs/packages/sources.js';
import { synthesize } from '../../../synth/artifact.js';
import { renderChart, type KubeObject } from '../../support/helm.js';
import { synthesizedArtifact } from '../../support/synth.js';

const files = synthesize();
const VM_APIS = ['--api-versions', VM_POD_SCRAPE_API, '--api-versions', VM_RULE_API];

interface PodTemplate {
  spec: { template: { metadata: { labels: Record<string, string> }; spec: { containers: { ports?: { name: string }[] }[] } } };
}
interface Scrape {
  spec: { selector: { matchLabels: Record<string, string> }; podMetricsEndpoints: { port: string }[] };
}

describe.each([
  ['address-controller', INSTALL.addressController, CORE_ALERTS],
  ['metallb-iad', INSTALL.metallbIad, DRIVER_ALERTS],
] as const)('packages/system/%s', (controller, install, alerts) => {
  const render = (...args: string[]): KubeObject[] =>
    renderChart(join(synthesizedArtifact(), 'packages', 'system', install.dir), '--namespace', install.namespace, ...args);
  const ofKind = (objects: KubeObject[], kind: string) => objects.filter((o) => o.kind === kind);

  it('renders neither scrape nor rules where the VictoriaMetrics operator is not served', () => {
    const objects = render();
    expect(ofKind(objects, 'VMPodScrape')).toEqual([]);
    expect(ofKind(objects, 'VMRule')).toEqual([]);
  });

  it("renders both where it is served, and the scrape selects the release's controller pods on a port they expose", () => {
    const objects = render(...VM_APIS);
    const [scrape, ...moreScrapes] = ofKind(objects, 'VMPodScrape') as (KubeObject & Scrape)[];
    expect(moreScrapes).toEqual([]);
    expect(ofKind(objects, 'VMRule').map((r) => r.metadata.name)).toEqual([alerts.name]);
    const [deployment] = ofKind(objects, 'Deployment') as (KubeObject & PodTemplate)[];
    expect(deployment?.metadata.name).toBe(controller);
    const pod = deployment!.spec.template;
    expect(pod.metadata.labels).toMatchObject(scrape!.spec.selector.matchLabels);
    const ports = pod.spec.containers.flatMap((c) => (c.ports ?? []).map((p) => p.name));
    expect(ports).toContain(scrape!.spec.podMetricsEndpoints[0]!.port);
    expect(scrape!.metadata.namespace).toBe(install.namespace);
  });

  it('scrapes nothing when the metrics endpoint is off, and leaves out the not-leading rule without leader election', () => {
    expect(ofKind(render(...VM_APIS, '--set', `${controller}.controller.metricsPort=0`), 'VMPodScrape')).toEqual([]);
    const [rule] = ofKind(render(...VM_APIS, '--set', `${controller}.controller.leaderElect=false`), 'VMRule') as (KubeObject & {
      spec: { groups: { rules: { alert: string }[] }[] };
    })[];
    const names = rule!.spec.groups.flatMap((g) => g.rules.map((r) => r.alert));
    expect(names.some((n) => n.endsWith('NotLeading'))).toBe(false);
    expect(names.some((n) => n.endsWith('Down'))).toBe(true);
  });
});

describe('the dashboard, placed as Cozystack places its own', () => {
  it("writes dashboards/<group>/<name>.json and the list's lines, outside packages/ and the OCI artifact", () => {
    const list = files.get(DASHBOARDS_LIST) as string;
    expect(list).toBe(DASHBOARDS.map((d) => `${d.group}/${d.name}\n`).join(''));
    for (const line of list.trim().split('\n')) {
      // packages/system/monitoring/templates/dashboards.yaml: `split "/"` must give exactly two parts.
      expect(line.split('/')).toHaveLength(2);
      expect(files.has(`dashboards/${line}.json`)).toBe(true);
    }
    expect([...files.keys()].filter((p) => p.includes('dashboards/') && !p.startsWith('dashboards/'))).toEqual([]);
  });

  it.each(DASHBOARDS.map((d) => [`${d.group}/${d.name}`, d] as const))('%s reads the ds_prometheus datasource everywhere and lays out on the 24-column grid', (path, d) => {
    const json = JSON.parse(files.get(`dashboards/${path}.json`) as string) as { uid: string; panels: Panel[]; templating: { list: { name: string; type: string }[] } };
    expect(json).toEqual(JSON.parse(JSON.stringify(d.json)));
    expect(json.uid).toMatch(/^[a-z0-9-]{1,40}$/);
    expect(json.templating.list[0]).toMatchObject({ name: 'ds_prometheus', type: 'datasource' });
    const queried = json.panels.filter((p) => p.type !== 'row');
    for (const panel of queried) {
      expect(panel.datasource).toEqual({ type: 'prometheus', uid: '$ds_prometheus' });
      expect(panel.targets?.length).toBeGreaterThan(0);
      expect(panel.targets!.every((t) => t.datasource.uid === '$ds_prometheus')).toBe(true);
    }
    // No two panels overlap and none leaves the grid.
    const cells = new Set<string>();
    for (const { gridPos: g, title } of json.panels) {
      expect(g.x + g.w, title).toBeLessThanOrEqual(24);
      for (let x = g.x; x < g.x + g.w; x++) {
        for (let y = g.y; y < g.y + g.h; y++) {
          expect(cells.has(`${x},${y}`), `${title} overlaps at ${x},${y}`).toBe(false);
          cells.add(`${x},${y}`);
        }
      }
    }
    expect(new Set(json.panels.map((p) => p.id)).size).toBe(json.panels.length);
  });
});
