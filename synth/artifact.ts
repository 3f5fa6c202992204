/**
 * The synthesized artifact as an in-memory file tree. Pure: the same inputs
 * give the same bytes; nothing here touches the disk or the network.
 */
import type { TObject } from '@sinclair/typebox';
import { App } from 'cdk8s';
import type { HelmChart } from '../constructs/helm/chart-writer.js';
import { checkImagePin, IMAGES } from '../constructs/images.js';
import { dashboardFiles } from '../constructs/monitoring/dashboard.js';
import { websiteFiles } from '../constructs/website/website.js';
import { PACKAGE_CHARTS, UPSTREAM_CHARTS } from './charts.js';
import { canonical, sha256Hex, type FileTree } from './file-tree.js';
import { ociArtifact } from './oci.js';
import { SynthInputError, resolveValues, type OverrideSources } from './overrides.js';
import { packagesTree, variantTables } from './packages.js';
import { defaultGraph, recordedGraph, SELECTIVE_INSTALL_FIXTURE, selectiveValues } from '../constructs/platform/source-graph.js';

export type { FileTree } from './file-tree.js';

export const CHECKSUMS_FILE = 'SHA256SUMS';
/** The OCI image layout of the cozystack-packages artifact (the packages/ tree). */
export const OCI_LAYOUT_DIR = 'cozystack-packages';
/** The artifact's manifest digest, recorded for release tooling. */
export const OCI_DIGEST_FILE = 'cozystack-packages.digest';

export function synthesize(sources: OverrideSources = {}): FileTree {
  for (const [name, pin] of Object.entries(IMAGES)) {
    const problem = checkImagePin(name, pin);
    if (problem) {
      throw new SynthInputError(`constructs/images.ts: ${problem}`);
    }
  }
  const values = resolveValues([...UPSTREAM_CHARTS, ...PACKAGE_CHARTS], sources);
  // Synthesis never calls app.synth(): files are collected from the tree, so no outdir is created.
  const app = new App({ outdir: '.' });
  const files: FileTree = new Map();
  const upstream = new Map<string, HelmChart<TObject>>();
  for (const entry of UPSTREAM_CHARTS) {
    const chart = entry.create(app, values.get(entry.name));
    upstream.set(entry.name, chart);
    for (const [path, content] of chart.files()) {
      files.set(`charts/${entry.name}/${path}`, content);
    }
  }
  const wrappers = PACKAGE_CHARTS.map((entry) => entry.create(app, need(upstream, entry.vendors), values.get(entry.name)));
  const graph = defaultGraph();
  const fixtures: FileTree = new Map([
    [SELECTIVE_INSTALL_FIXTURE, selectiveValues(['postgres'], graph, recordedGraph().recordedFrom)],
  ]);
  const packages = packagesTree(app, wrappers, fixtures);
  for (const [path, content] of packages) {
    files.set(`packages/${path}`, content);
  }
  for (const [path, content] of variantTables()) {
    files.set(path, content);
  }
  // Outside packages/ and the OCI artifact: Cozystack bakes dashboards/ into its grafana-dashboards image.
  for (const [path, content] of dashboardFiles()) {
    files.set(path, content);
  }
  // Outside packages/ and the OCI artifact too: pages and cards for the Cozystack website.
  for (const [path, content] of websiteFiles()) {
    files.set(path, content);
  }
  const oci = ociArtifact(packages);
  for (const [path, content] of oci.files) {
    files.set(`${OCI_LAYOUT_DIR}/${path}`, typeof content === 'string' ? content : canonical(content));
  }
  files.set(OCI_DIGEST_FILE, `${oci.manifest.digest}\n`);
  return withChecksums(files);
}

function need(charts: ReadonlyMap<string, HelmChart<TObject>>, name: string): HelmChart<TObject> {
  const chart = charts.get(name);
  if (!chart) {
    throw new Error(`upstream chart ${name} was not synthesized`);
  }
  return chart;
}

/** Sorts the tree and appends SHA256SUMS (sha256sum -c format) over every other file. */
function withChecksums(files: FileTree): FileTree {
  const sorted = [...files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const sums = sorted.map(([path, content]) => `${sha256Hex(content)}  ${path}\n`).join('');
  return new Map([...sorted, [CHECKSUMS_FILE, sums]]);
}

/** The cozystack-packages manifest digest recorded in the tree. */
export function artifactDigest(files: FileTree): string {
  const recorded = files.get(OCI_DIGEST_FILE);
  if (typeof recorded !== 'string') {
    throw new Error(`${OCI_DIGEST_FILE} missing from the synthesized tree`);
  }
  return recorded.trim();
}
