/**
 * Value overrides for synth: `--values FILE` (a YAML map of chart name to
 * values), `--set chart.path=value` and `--set-string chart.path=value` (helm's
 * grammar: synth/set-syntax.ts), merged over each chart's defaults in that
 * order (helm's) and validated against the chart's values schema after each layer,
 * so an error names the file or flag it came from and the field.
 *
 * An override of an upstream chart also lands under that chart's key in every
 * package that vendors it (`metallb-iad.x` → `cozy-metallb-iad` values
 * `metallb-iad.x`): the package is what ships, and its values win over the
 * vendored chart's own values.yaml at install.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { validateValues, vouchFor } from '../constructs/helm/values.js';
import type { ChartEntry } from './charts.js';
import { overrideTree, parseSetArgument, SetSyntaxError, type SetAssignment } from './set-syntax.js';

/** A chart whose values receive another chart's overrides under that chart's name. */
type Entry = ChartEntry & { readonly vendors?: string };

/** A user error: printed as one line, exit code 2, nothing written. */
export class SynthInputError extends Error {}

export interface OverrideSources {
  readonly valuesFiles?: readonly string[];
  readonly set?: readonly string[];
  /** `--set` whose values all stay strings. */
  readonly setString?: readonly string[];
}

type Tree = Record<string, unknown>;

/** Merged, validated values per chart name. */
export function resolveValues(charts: readonly Entry[], sources: OverrideSources): Map<string, unknown> {
  const byName = new Map(charts.map((c) => [c.name, c]));
  const merged = new Map<string, unknown>(charts.map((c) => [c.name, vouchFor(structuredClone(c.values.defaults))]));

  const layer = (source: string, chart: Entry, override: unknown, context: string) => {
    const next = deepMerge(merged.get(chart.name), override);
    const errors = validateValues(chart.values, next);
    if (errors.length > 0) {
      const first = errors[0]!;
      const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
      throw new SynthInputError(`${source}: ${chart.name}.${first.field}: ${first.message}${context}${more}`);
    }
    merged.set(chart.name, vouchFor(next));
  };
  const apply = (source: string, chartName: string, override: unknown, context: string) => {
    const chart = byName.get(chartName);
    if (!chart) {
      throw new SynthInputError(
        `${source}: unknown chart ${JSON.stringify(chartName)} (known: ${[...byName.keys()].join(', ')})`,
      );
    }
    layer(source, chart, override, context);
    for (const wrapper of charts.filter((c) => c.vendors === chartName)) {
      layer(source, wrapper, { [chartName]: override }, context);
    }
  };

  for (const file of sources.valuesFiles ?? []) {
    const tree = readValuesFile(file);
    for (const [chartName, override] of Object.entries(tree)) {
      apply(file, chartName, override, '');
    }
  }
  const sets = [
    ...(sources.set ?? []).map((text) => ({ flag: '--set', text, asString: false })),
    ...(sources.setString ?? []).map((text) => ({ flag: '--set-string', text, asString: true })),
  ];
  for (const { flag, text, asString } of sets) {
    for (const { chartName, override, raw } of parseSet(flag, text, asString)) {
      apply(`${flag} ${text}`, chartName, override, ` (got ${raw})`);
    }
  }
  return merged;
}

function readValuesFile(file: string): Tree {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new SynthInputError(`--values ${file}: cannot read: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  let tree: unknown;
  try {
    tree = parse(text);
  } catch (error) {
    throw new SynthInputError(`${file}: not YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (tree === null || tree === undefined) {
    return {};
  }
  if (!isTree(tree)) {
    throw new SynthInputError(`${file}: expected a map of chart name to values`);
  }
  return tree;
}

/** Each `chart.a.b=value` of one flag, as override trees for its chart. */
function parseSet(flag: string, text: string, asString: boolean): { chartName: string; override: Tree; raw: string }[] {
  let assignments: SetAssignment[];
  try {
    assignments = parseSetArgument(text, { asString });
  } catch (error) {
    if (error instanceof SetSyntaxError) {
      throw new SynthInputError(`${flag} ${text}: ${error.message}`);
    }
    throw error;
  }
  return assignments.map(({ key, path, value }) => {
    const [chartName, ...fields] = path;
    if (typeof chartName !== 'string' || fields.length === 0) {
      throw new SynthInputError(`${flag} ${text}: key ${JSON.stringify(key)}: expected <chart>.<path>=<value>`);
    }
    return { chartName, override: overrideTree(fields, value) as Tree, raw: JSON.stringify(value) };
  });
}

function isTree(value: unknown): value is Tree {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Maps merge key by key; anything else replaces (Helm's rule for lists); a null removes the key, as in helm. */
export function deepMerge(base: unknown, override: unknown): unknown {
  if (!isTree(base) || !isTree(override)) {
    return structuredClone(override);
  }
  const out: Tree = { ...base };
  for (const [key, value] of Object.entries(override)) {
    if (value === null) {
      delete out[key];
      continue;
    }
    out[key] = key in base ? deepMerge(base[key], value) : structuredClone(value);
  }
  return out;
}
