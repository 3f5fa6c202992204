/**
 * Value overrides for synth: `--values FILE` (a YAML map of chart name to
 * values) and `--set chart.path=value`, merged over each chart's defaults in
 * that order and validated against the chart's values schema after each layer,
 * so an error names the file or flag it came from and the field.
 *
 * An override of an upstream chart also lands under that chart's key in every
 * package that vendors it (`metallb-iad.x` → `cozy-metallb-iad` values
 * `metallb-iad.x`): the package is what ships, and its values win over the
 * vendored chart's own values.yaml at install.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { validateValues } from '../constructs/helm/values.js';
import type { ChartEntry } from './charts.js';

/** A chart whose values receive another chart's overrides under that chart's name. */
type Entry = ChartEntry & { readonly vendors?: string };

/** A user error: printed as one line, exit code 1, nothing written. */
export class SynthInputError extends Error {}

export interface OverrideSources {
  readonly valuesFiles?: readonly string[];
  readonly set?: readonly string[];
}

type Tree = Record<string, unknown>;

/** Merged, validated values per chart name. */
export function resolveValues(charts: readonly Entry[], sources: OverrideSources): Map<string, unknown> {
  const byName = new Map(charts.map((c) => [c.name, c]));
  const merged = new Map<string, unknown>(charts.map((c) => [c.name, structuredClone(c.values.defaults)]));

  const layer = (source: string, chart: Entry, override: unknown, context: string) => {
    const next = deepMerge(merged.get(chart.name), override);
    const errors = validateValues(chart.values, next);
    if (errors.length > 0) {
      const first = errors[0]!;
      const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
      throw new SynthInputError(`${source}: ${chart.name}.${first.field}: ${first.message}${context}${more}`);
    }
    merged.set(chart.name, next);
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
  for (const assignment of sources.set ?? []) {
    const { chartName, override, raw } = parseSet(assignment);
    apply(`--set ${assignment}`, chartName, override, ` (got ${raw})`);
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

/** `chart.a.b=value`; the value is read as a YAML scalar, as `helm --set` does. */
function parseSet(assignment: string): { chartName: string; override: Tree; raw: string } {
  const eq = assignment.indexOf('=');
  const path = eq > 0 ? assignment.slice(0, eq).split('.') : [];
  if (path.length < 2 || path.some((p) => p === '')) {
    throw new SynthInputError(`--set ${assignment}: expected <chart>.<path>=<value>`);
  }
  const raw = assignment.slice(eq + 1);
  let value: unknown;
  try {
    value = raw === '' ? '' : parse(raw);
  } catch {
    value = raw;
  }
  const [chartName, ...fields] = path as [string, ...string[]];
  let override: unknown = value;
  for (const field of [...fields].reverse()) {
    override = { [field]: override };
  }
  return { chartName, override: override as Tree, raw: JSON.stringify(value) };
}

function isTree(value: unknown): value is Tree {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Maps merge key by key; anything else replaces (Helm's rule for lists). */
export function deepMerge(base: unknown, override: unknown): unknown {
  if (!isTree(base) || !isTree(override)) {
    return structuredClone(override);
  }
  const out: Tree = { ...base };
  for (const [key, value] of Object.entries(override)) {
    out[key] = key in base ? deepMerge(base[key], value) : structuredClone(value);
  }
  return out;
}
