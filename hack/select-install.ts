/**
 * The install-side companion of suite selection (docs/packaging.md):
 * the forward dependency closure of the PackageSources that some end-to-end
 * suites need, over the same graph as Cozystack's hack/select-install.sh.
 *
 *   npm run select-install -- <suite>... | -            closure, one line, sorted
 *   npm run select-install -- --disabled <suite>...     every other PackageSource, to disable
 *   npm run select-install -- --values <suite>...       platform values (bundles.disabledPackages) doing that
 *   npm run select-install -- --validate                dangling deps, cycles, unmapped suites
 *   npm run select-install -- --record DIR              re-record the platform graph from a Cozystack checkout
 *   [--sources-dir DIR]...  PackageSource YAML files instead of the recorded graph (repeatable: the
 *                           platform's sources, then ours: DIR/packages/core/platform/sources dist/packages/core/platform/sources)
 *   [--suites-dir DIR]      suites as <DIR>/<suite>/chainsaw-test.yaml instead of this repository's suites
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import {
  closure,
  defaultGraph,
  disabledFor,
  GraphError,
  graphFromDir,
  mergeGraphs,
  RECORDED_GRAPH_PATH,
  recordedGraph,
  selectiveValues,
  validate,
  type Graph,
  type RecordedGraph,
} from '../constructs/platform/source-graph.js';
import { isMain, runTool, ToolError } from './lib/cli.js';

/** The suites this repository's end-to-end runs name. */
export const SUITES = ['address-controller', 'metallb-iad', 'postgres'] as const;

const USAGE = 'usage: select-install [--sources-dir DIR]... [--suites-dir DIR] (<suite>... | - | --disabled <suite>... | --values <suite>... | --validate | --record COZYSTACK_DIR)';

function suitesFromDir(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new ToolError([`${dir}: no such suites directory`]);
  }
  return readdirSync(dir)
    .filter((name) => existsSync(join(dir, name, 'chainsaw-test.yaml')))
    .sort();
}

/** The checkout's commit: its SNAPSHOT file (a trimmed copy) or git. */
function checkoutRevision(dir: string): string {
  const snapshot = join(dir, 'SNAPSHOT');
  if (existsSync(snapshot)) {
    return readFileSync(snapshot, 'utf8').split(/\s+/)[0]!;
  }
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown commit';
  }
}

/** A recording of a checkout's packages/core/platform/sources. */
export function recordFrom(dir: string): RecordedGraph {
  const graph = graphFromDir(join(dir, 'packages', 'core', 'platform', 'sources'));
  return { recordedFrom: `cozystack/cozystack@${checkoutRevision(dir)}`, sources: Object.fromEntries(graph) };
}

interface Parsed {
  readonly sourcesDirs: string[];
  suitesDir?: string;
  mode?: '--validate' | '--disabled' | '--values' | '--record';
  record?: string;
  readonly suites: string[];
}

function parse(argv: readonly string[]): Parsed {
  const parsed: Parsed = { sourcesDirs: [], suites: [] };
  const value = (flag: string, at: number): string => {
    const next = argv[at + 1];
    if (next === undefined || next.startsWith('--')) {
      throw new ToolError([`${flag} needs a directory`, USAGE]);
    }
    return next;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--sources-dir') {
      parsed.sourcesDirs.push(value(arg, i++));
    } else if (arg === '--suites-dir') {
      parsed.suitesDir = value(arg, i++);
    } else if (arg === '--validate' || arg === '--disabled' || arg === '--values' || arg === '--record') {
      if (parsed.mode) {
        throw new ToolError([`${parsed.mode} and ${arg} cannot be combined`, USAGE]);
      }
      parsed.mode = arg;
      if (arg === '--record') {
        parsed.record = value(arg, i++);
      }
    } else if (arg.startsWith('-') && arg !== '-') {
      throw new ToolError([`unknown flag ${arg}`, USAGE]);
    } else {
      parsed.suites.push(arg);
    }
  }
  return parsed;
}

export function main(argv: string[], stdin: () => string = () => readFileSync(0, 'utf8')): string {
  try {
    return run(parse(argv), stdin);
  } catch (error) {
    if (error instanceof GraphError) {
      throw new ToolError(error.lines);
    }
    throw error;
  }
}

function run(args: Parsed, stdin: () => string): string {
  if (args.mode === '--record') {
    const recorded = recordFrom(args.record!);
    writeFileSync(RECORDED_GRAPH_PATH, `${JSON.stringify(recorded, null, 2)}\n`);
    process.stderr.write(`select-install: recorded ${Object.keys(recorded.sources).length} PackageSources of ${recorded.recordedFrom} into ${RECORDED_GRAPH_PATH}\n`);
    return '';
  }
  const graph: Graph = args.sourcesDirs.length > 0 ? mergeGraphs(args.sourcesDirs.map(graphFromDir)) : defaultGraph();
  if (args.mode === '--validate') {
    if (args.suites.length > 0) {
      throw new ToolError([`--validate takes no suites (got ${args.suites.join(' ')})`, USAGE]);
    }
    const problems = validate(graph, args.suitesDir ? suitesFromDir(args.suitesDir) : SUITES);
    if (problems.length > 0) {
      throw new ToolError(problems);
    }
    process.stderr.write(`select-install: graph OK (${graph.size} sources)\n`);
    return '';
  }
  const suites = (args.suites.length === 1 && args.suites[0] === '-' ? stdin() : args.suites.join(' ')).split(/\s+/).filter(Boolean);
  if (args.mode === '--disabled') {
    return `${disabledFor(suites, graph).join(' ')}\n`;
  }
  if (args.mode === '--values') {
    const from = args.sourcesDirs.length > 0 ? args.sourcesDirs.join(' + ') : recordedGraph().recordedFrom;
    return selectiveValues(suites, graph, from);
  }
  const selected = closure(suites, graph);
  return selected.length > 0 ? `${selected.join(' ')}\n` : '';
}

if (isMain(import.meta.url)) {
  runTool('select-install', (argv) => main(argv));
}
