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
import { InputError, isMain, parseArgs, runTool, toolParser, ToolError } from '../lib/cli.js';

/** The suites this repository's end-to-end runs name. */
export const SUITES = ['address-controller', 'metallb-iad', 'postgres'] as const;

function suitesFromDir(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new InputError(`${dir}: no such suites directory`);
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
  readonly suitesDir?: string;
  readonly mode?: 'validate' | 'disabled' | 'values' | 'record';
  readonly record?: string;
  readonly suites: string[];
}

const MODES = ['validate', 'disabled', 'values', 'record'] as const;

function parse(argv: readonly string[]): Parsed | undefined {
  const parser = toolParser('select-install', argv, '[--sources-dir DIR]... [--suites-dir DIR] (<suite>... | - | --disabled <suite>... | --values <suite>... | --validate | --record COZYSTACK_DIR)')
    .option('disabled', { type: 'boolean', describe: 'Print every other PackageSource (to disable)' })
    .option('values', { type: 'boolean', describe: 'Print platform values (bundles.disabledPackages) doing that' })
    .option('validate', { type: 'boolean', describe: 'Check for dangling deps, cycles and unmapped suites (exit 1 on a problem)' })
    .option('record', { type: 'string', describe: 'Re-record the platform graph from this Cozystack checkout' })
    .option('sources-dir', { type: 'string', array: true, describe: 'PackageSource YAML folders instead of the recorded graph (repeatable)' })
    .option('suites-dir', { type: 'string', describe: 'Suites as <DIR>/<suite>/chainsaw-test.yaml' })
    .conflicts('disabled', ['values', 'validate', 'record'])
    .conflicts('values', ['validate', 'record'])
    .conflicts('validate', 'record');
  const args = parseArgs(parser, argv, { positionals: Infinity });
  if (!args) {
    return undefined;
  }
  const mode = MODES.find((m) => args[m] !== undefined && args[m] !== false);
  return {
    sourcesDirs: args['sources-dir'] ?? [],
    suitesDir: args['suites-dir'],
    mode,
    record: args.record,
    suites: args._,
  };
}

/** Stdout text; a GraphError is a failed check under --validate and bad input otherwise. */
export function main(argv: string[], stdin: () => string = () => readFileSync(0, 'utf8')): string {
  const args = parse(argv);
  if (!args) {
    return '';
  }
  try {
    return run(args, stdin);
  } catch (error) {
    if (error instanceof GraphError) {
      throw args.mode === 'validate' ? new ToolError(error.lines) : new InputError(error.lines);
    }
    throw error;
  }
}

function run(args: Parsed, stdin: () => string): string {
  if (args.mode === 'record') {
    const recorded = recordFrom(args.record!);
    writeFileSync(RECORDED_GRAPH_PATH, `${JSON.stringify(recorded, null, 2)}\n`);
    process.stderr.write(`select-install: recorded ${Object.keys(recorded.sources).length} PackageSources of ${recorded.recordedFrom} into ${RECORDED_GRAPH_PATH}\n`);
    return '';
  }
  const graph: Graph = args.sourcesDirs.length > 0 ? mergeGraphs(args.sourcesDirs.map(graphFromDir)) : defaultGraph();
  if (args.mode === 'validate') {
    if (args.suites.length > 0) {
      throw new InputError(`--validate takes no suites (got ${args.suites.join(' ')})`);
    }
    const problems = validate(graph, args.suitesDir ? suitesFromDir(args.suitesDir) : SUITES);
    if (problems.length > 0) {
      throw new ToolError(problems);
    }
    process.stderr.write(`select-install: graph OK (${graph.size} sources)\n`);
    return '';
  }
  const suites = (args.suites.length === 1 && args.suites[0] === '-' ? stdin() : args.suites.join(' ')).split(/\s+/).filter(Boolean);
  if (args.mode === 'disabled') {
    return `${disabledFor(suites, graph).join(' ')}\n`;
  }
  if (args.mode === 'values') {
    const from = args.sourcesDirs.length > 0 ? args.sourcesDirs.join(' + ') : recordedGraph().recordedFrom;
    return selectiveValues(suites, graph, from);
  }
  const selected = closure(suites, graph);
  return selected.length > 0 ? `${selected.join(' ')}\n` : '';
}

if (isMain(import.meta.url)) {
  runTool('select-install', (argv) => main(argv));
}
