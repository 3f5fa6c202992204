/**
 * The install-side companion of suite selection (cozystack-packaging.md §4):
 * the forward dependency closure of the PackageSources that some end-to-end
 * suites need.
 *
 *   npm run select-install -- <suite>... | -            closure, one line, sorted
 *   npm run select-install -- --disabled <suite>...     the known packages to disable instead
 *   npm run select-install -- --values <suite>...       platform values (bundles.disabledPackages) doing that
 *   npm run select-install -- --validate                dangling deps, cycles, unmapped suites
 *   [--sources-dir DIR]  PackageSource YAML files instead of the built-in catalog
 *   [--suites-dir DIR]   suites as <DIR>/<suite>/chainsaw-test.yaml instead of the built-in list
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { stringify } from 'yaml';
import { sourceCatalog, type CatalogEntry } from '../constructs/platform/catalog.js';
import { knownPackages } from '../constructs/platform/variants.js';
import { isMain, runTool, ToolError } from './lib/cli.js';

const ENGINE = 'cozystack.cozystack-engine';

/** The suites this repository's end-to-end runs name. */
export const SUITES = ['address-controller', 'metallb-iad', 'postgres'] as const;

export type Graph = ReadonlyMap<string, readonly string[]>;

export function catalogGraph(entries: readonly CatalogEntry[] = sourceCatalog()): Graph {
  return new Map(entries.map((e) => [e.name, e.dependsOn]));
}

/** Reads every PackageSource in `dir` (one or more documents per *.yaml file). */
export function graphFromDir(dir: string): Graph {
  if (!existsSync(dir)) {
    throw new ToolError([`${dir}: no such sources directory`]);
  }
  const graph = new Map<string, string[]>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
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
  if (suite.startsWith('kubernetes-')) {
    return known('cozystack.kubernetes-application', graph);
  }
  if (suite === 'vminstance') {
    return known('cozystack.vm-instance-application', graph);
  }
  if (suite === 'securitygroup') {
    return known('cozystack.securitygroup-controller', graph);
  }
  return known(`cozystack.${suite}-application`, graph) ?? known(`cozystack.${suite}`, graph);
}

function known(name: string, graph: Graph): string | undefined {
  return graph.has(name) ? name : undefined;
}

/** Forward closure of the suites' sources plus the engine; every unmapped suite is an error. */
export function closure(suites: readonly string[], graph: Graph): string[] {
  if (suites.length === 0) {
    return [];
  }
  const unmapped = suites.filter((s) => !suiteToSource(s, graph));
  if (unmapped.length > 0) {
    throw new ToolError(unmapped.map((s) => `suite ${JSON.stringify(s)} maps to no PackageSource`));
  }
  if (!graph.has(ENGINE)) {
    throw new ToolError([`${ENGINE} is not among the sources; every install needs it`]);
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

/** Packages the platform would render that the suites do not need. */
export function disabledFor(suites: readonly string[], graph: Graph): string[] {
  const needed = new Set(closure(suites, graph));
  const universe = new Set([...knownPackages(), ...graph.keys()]);
  return [...universe].filter((p) => !needed.has(p)).sort();
}

/** Platform values that install only what the suites need (the selective-install fixture). */
export function selectiveValues(suites: readonly string[], graph: Graph): string {
  const header = [
    '# Generated by cozy-addresses: npm run select-install -- --values ' + suites.join(' '),
    '# Platform values for a selective install: everything the suites do not need is disabled.',
    '',
  ].join('\n');
  return header + stringify({ bundles: { disabledPackages: disabledFor(suites, graph) } }, { lineWidth: 0 });
}

function suitesFromDir(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new ToolError([`${dir}: no such suites directory`]);
  }
  return readdirSync(dir)
    .filter((name) => existsSync(join(dir, name, 'chainsaw-test.yaml')))
    .sort();
}

export function main(argv: string[], stdin: () => string = () => readFileSync(0, 'utf8')): string {
  const args = [...argv];
  const take = (flag: string): string | undefined => {
    const at = args.indexOf(flag);
    if (at < 0) {
      return undefined;
    }
    const value = args[at + 1];
    if (value === undefined || value.startsWith('--')) {
      throw new ToolError([`${flag} needs a directory`]);
    }
    args.splice(at, 2);
    return value;
  };
  const sourcesDir = take('--sources-dir');
  const suitesDir = take('--suites-dir');
  const mode = ['--validate', '--disabled', '--values'].find((f) => args.includes(f));
  const rest = args.filter((a) => a !== mode);
  const unknown = rest.find((a) => a.startsWith('--'));
  if (unknown) {
    throw new ToolError([`unknown flag ${unknown}`]);
  }
  const graph = sourcesDir ? graphFromDir(sourcesDir) : catalogGraph();
  if (mode === '--validate') {
    const problems = validate(graph, suitesDir ? suitesFromDir(suitesDir) : SUITES);
    if (problems.length > 0) {
      throw new ToolError(problems);
    }
    process.stderr.write(`select-install: graph OK (${graph.size} sources)\n`);
    return '';
  }
  const suites = (rest.length === 1 && rest[0] === '-' ? stdin() : rest.join(' ')).split(/\s+/).filter(Boolean);
  if (mode === '--disabled') {
    return `${disabledFor(suites, graph).join(' ')}\n`;
  }
  if (mode === '--values') {
    return selectiveValues(suites, graph);
  }
  const selected = closure(suites, graph);
  return selected.length > 0 ? `${selected.join(' ')}\n` : '';
}

if (isMain(import.meta.url)) {
  runTool('select-install', (argv) => main(argv));
}
