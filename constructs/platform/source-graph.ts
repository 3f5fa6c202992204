/**
 * The PackageSource dependency graph and the walks Cozystack's
 * hack/select-install.sh does over it (docs/packaging.md): the forward
 * closure a set of e2e suites needs, and the graph checks of `--validate`.
 *
 * Synth needs the platform's graph without a Cozystack checkout, so the real
 * sources' names and dependsOn are recorded from one
 * (`npm run select-install -- --record DIR` writes cozystack-sources.json) and
 * this repository's own sources are added from their definitions. Conformance
 * checks the recording against the checkout it is given.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import recorded from './cozystack-sources.json' with { type: 'json' };
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import { ADDRESS_PACKAGE_SOURCES } from '../packages/sources.js';
import { sourceDependencies } from './package-source.js';

export type Graph = ReadonlyMap<string, readonly string[]>;

export const ENGINE = 'cozystack.cozystack-engine';

/** A problem with the input: reported as lines on stderr, without a stack trace. */
export class GraphError extends Error {
  constructor(readonly lines: readonly string[]) {
    super(lines.join('\n'));
  }
}

export interface RecordedGraph {
  /** Where the recording was taken: repository and commit of the Cozystack checkout. */
  readonly recordedFrom: string;
  /** Every PackageSource of packages/core/platform/sources, with the union of its variants' dependsOn. */
  readonly sources: Readonly<Record<string, readonly string[]>>;
}

export const RECORDED_GRAPH_PATH = fileURLToPath(new URL('./cozystack-sources.json', import.meta.url));

/** Imported rather than read, so that synth's bundle carries it (synth/bin.mjs). */
export function recordedGraph(): RecordedGraph {
  return recorded as RecordedGraph;
}

/** This repository's PackageSources as graph entries. */
export function ownSources(): Graph {
  return new Map(ADDRESS_PACKAGE_SOURCES.map((d) => [d.name, sourceDependencies(d)]));
}

/** The platform's recorded graph plus this repository's sources: what synth and the CLI use by default. */
export function defaultGraph(): Graph {
  return mergeGraphs([new Map(Object.entries(recordedGraph().sources)), ownSources()]);
}

export function mergeGraphs(graphs: readonly Graph[]): Graph {
  const merged = new Map<string, readonly string[]>();
  for (const graph of graphs) {
    for (const [name, deps] of graph) {
      merged.set(name, deps);
    }
  }
  // Code-unit order: the same on every machine (localeCompare follows the locale), and no ICU collator to load.
  return new Map([...merged].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Reads every PackageSource in `dir` (one or more documents per *.yaml file). */
export function graphFromDir(dir: string): Graph {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new GraphError([`${dir}: no such sources directory`]);
  }
  const graph = new Map<string, string[]>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      if (doc.errors.length > 0) {
        throw new GraphError([`${join(dir, file)}: not YAML: ${doc.errors[0]!.message.split('\n')[0]}`]);
      }
      const source = doc.toJS() as { kind?: string; metadata?: { name?: string }; spec?: { variants?: { dependsOn?: string[] }[] } } | null;
      if (source?.kind !== 'PackageSource' || !source.metadata?.name) {
        continue;
      }
      const deps = (source.spec?.variants ?? []).flatMap((v) => v.dependsOn ?? []);
      graph.set(source.metadata.name, [...new Set(deps)].sort());
    }
  }
  return graph;
}

/** The source a suite exercises, as Cozystack's suite_to_source maps it. */
export function suiteToSource(suite: string, graph: Graph): string | undefined {
  const known = (name: string) => (graph.has(name) ? name : undefined);
  if (/^kubernetes-(latest|previous|oidc-system|oidc-customconfig)$/.test(suite)) {
    return known('cozystack.kubernetes-application');
  }
  if (suite === 'vminstance') {
    return known('cozystack.vm-instance-application');
  }
  if (suite === 'securitygroup') {
    return known('cozystack.securitygroup-controller');
  }
  return known(`cozystack.${suite}-application`) ?? known(`cozystack.${suite}`);
}

/** Forward closure of the suites' sources plus the engine; every unmapped suite is an error. */
export function closure(suites: readonly string[], graph: Graph): string[] {
  if (suites.length === 0) {
    return [];
  }
  const unmapped = suites.filter((s) => !suiteToSource(s, graph));
  if (unmapped.length > 0) {
    throw new GraphError(unmapped.map((s) => `suite ${JSON.stringify(s)} maps to no PackageSource`));
  }
  if (!graph.has(ENGINE)) {
    throw new GraphError([`${ENGINE} is not among the sources; every install needs it`]);
  }
  const selected = new Set<string>([ENGINE, ...suites.map((s) => suiteToSource(s, graph)!)]);
  const queue = [...selected];
  while (queue.length > 0) {
    for (const dep of graph.get(queue.pop()!) ?? []) {
      if (!selected.has(dep)) {
        selected.add(dep);
        queue.push(dep);
      }
    }
  }
  return [...selected].sort();
}

/** Problems with the graph and the suite mapping; empty when sound. */
export function validate(graph: Graph, suites: readonly string[]): string[] {
  const problems: string[] = [];
  const dangling = new Map<string, string[]>();
  for (const [owner, deps] of graph) {
    for (const dep of deps) {
      if (!graph.has(dep)) {
        dangling.set(dep, [...(dangling.get(dep) ?? []), owner]);
      }
    }
  }
  for (const [dep, owners] of [...dangling].sort()) {
    problems.push(`dangling dependency ${dep} (needed by ${owners.sort().join(', ')})`);
  }
  for (const start of [...graph.keys()].sort()) {
    if (reaches(graph, start, start)) {
      problems.push(`dependency cycle through ${start}`);
    }
  }
  for (const suite of suites) {
    if (!suiteToSource(suite, graph)) {
      problems.push(`suite ${JSON.stringify(suite)} maps to no PackageSource`);
    }
  }
  return problems;
}

function reaches(graph: Graph, from: string, target: string): boolean {
  const seen = new Set<string>();
  const stack = [...(graph.get(from) ?? [])];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (next === target) {
      return true;
    }
    if (!seen.has(next)) {
      seen.add(next);
      stack.push(...(graph.get(next) ?? []));
    }
  }
  return false;
}

/**
 * Every PackageSource the suites do not need. Refuses an empty selection: with
 * no suite the closure is empty and the answer would disable every package,
 * the engine included.
 */
export function disabledFor(suites: readonly string[], graph: Graph): string[] {
  if (suites.length === 0) {
    throw new GraphError(['no suite given: a selective install needs at least one suite (none would disable every package, the engine included)']);
  }
  const needed = new Set(closure(suites, graph));
  return [...graph.keys()].filter((p) => !needed.has(p)).sort();
}

/** The fixture's path inside the packages tree, where the platform chart's tests load it. */
export const SELECTIVE_INSTALL_FIXTURE = 'selective-install-postgres-values.yaml';

/** Platform values that install only what the suites need (`bundles.disabledPackages`). */
export function selectiveValues(suites: readonly string[], graph: Graph, recordedFrom: string): string {
  const header = [
    `# Generated by cozy-addresses: npm run select-install -- --values ${suites.join(' ')}`,
    `# Platform values for a selective install: every PackageSource the suites do not need is disabled.`,
    `# The graph: Cozystack's PackageSources (${recordedFrom}) plus this project's.`,
    '',
  ].join('\n');
  return header + stringify({ bundles: { disabledPackages: disabledFor(suites, graph) } }, { lineWidth: 0 });
}
