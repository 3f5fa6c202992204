/**
 * The `cozystack-packages` artifact as an in-memory file tree. Pure: the same
 * inputs give the same bytes; nothing here touches the disk or the network.
 */
import { createHash } from 'node:crypto';
import { App } from 'cdk8s';
import { checkImagePin, IMAGES } from '../constructs/images.js';
import type { TObject } from '@sinclair/typebox';
import type { HelmChart } from '../constructs/helm/chart-writer.js';
import { UPSTREAM_CHARTS } from './charts.js';
import { packagesTree, variantTables } from './packages.js';
import { SynthInputError, resolveValues, type OverrideSources } from './overrides.js';

/** Path (relative to the artifact root, `/`-separated) to content. */
export type FileTree = Map<string, string>;

export const CHECKSUMS_FILE = 'SHA256SUMS';

export function synthesize(sources: OverrideSources = {}): FileTree {
  for (const [name, pin] of Object.entries(IMAGES)) {
    const problem = checkImagePin(name, pin);
    if (problem) {
      throw new SynthInputError(`constructs/images.ts: ${problem}`);
    }
  }
  const values = resolveValues(UPSTREAM_CHARTS, sources);
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
  for (const [path, content] of packagesTree(app, upstream)) {
    files.set(`packages/${path}`, content);
  }
  for (const [path, content] of variantTables()) {
    files.set(path, content);
  }
  return withChecksums(files);
}

/** Sorts the tree and appends SHA256SUMS (sha256sum -c format) over every other file. */
function withChecksums(files: FileTree): FileTree {
  const sorted = [...files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const sums = sorted.map(([path, content]) => `${sha256(content)}  ${path}\n`).join('');
  return new Map([...sorted, [CHECKSUMS_FILE, sums]]);
}

/** Digest of the whole artifact: the sha256 of its SHA256SUMS file. */
export function artifactDigest(files: FileTree): string {
  return `sha256:${sha256(files.get(CHECKSUMS_FILE) ?? '')}`;
}

function sha256(content: string): string {
  return createHash('sha256').update(content, 'utf8').digest('hex');
}
