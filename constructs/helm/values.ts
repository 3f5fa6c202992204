/**
 * Chart values: one TypeBox schema gives the TypeScript type of `.Values`, the
 * chart's `values.schema.json` (which Helm enforces on install, template and
 * lint) and the validator synth uses for overrides.
 */
import { createRequire } from 'node:module';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { toOpenApi } from '../../api/typebox/schema.js';

export interface ValuesDefinition<S extends TObject = TObject> {
  /** The schema of `.Values`; objects reject unknown keys unless they say otherwise. */
  readonly schema: S;
  /** What values.yaml holds. Validated against the schema at synth. */
  readonly defaults: Static<S>;
  /**
   * Whether values.schema.json admits keys at the root that the schema does not
   * name. Cozystack's operator layers its `cozystack-values` Secret (a top-level
   * `_cluster` map, `_namespace` in tenants) under every HelmRelease it creates,
   * so a wrapper chart's root must stay open; the keys it owns stay closed.
   * Synth's own overrides are still checked against the closed schema.
   * @default false
   */
  readonly openRoot?: boolean;
}

export function defineValues<S extends TObject>(
  schema: S,
  defaults: Static<S>,
  options: { readonly openRoot?: boolean } = {},
): ValuesDefinition<S> {
  return { schema, defaults, ...options };
}

/** The JSON Schema written as values.schema.json. */
export function valuesJsonSchema(definition: ValuesDefinition): Record<string, unknown> {
  const schema = toOpenApi(definition.schema);
  const properties = { ...(schema.properties as Record<string, unknown>) };
  // Helm hands every subchart the parent's `global` map; a closed schema must admit it.
  properties.global = { type: 'object', description: 'Values shared with every chart of a release (Helm).' };
  const root = definition.openRoot ? { additionalProperties: true } : {};
  return { $schema: 'http://json-schema.org/draft-07/schema#', ...schema, ...root, properties };
}

/** One schema violation, with the offending field as a dotted path. */
export interface ValuesError {
  readonly field: string;
  readonly message: string;
}

let ajvInstance: Ajv | undefined;
/**
 * Loaded and made on first use: a synth run without overrides validates
 * nothing, and ajv is a fifth of synth's bundle (which, through this require,
 * leaves it out and loads it from node_modules when needed).
 */
function ajv(): Ajv {
  if (!ajvInstance) {
    const { Ajv: AjvClass } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
    // verbose: an error carries its subschema, whose description says why a conditional rule applies.
    ajvInstance = new AjvClass({ allErrors: true, strict: false, verbose: true });
  }
  return ajvInstance;
}
const compiled = new WeakMap<object, ValidateFunction>();

/**
 * Values objects already known valid: checked layer by layer by synth's
 * overrides, or a fresh copy of a chart's authored defaults (which
 * test/constructs/charts tests check against the schema). The chart writer
 * skips its own check for them: compiling four schemas is a tenth of a synth run.
 */
const vouched = new WeakSet<object>();

export function vouchFor<T>(values: T): T {
  if (values && typeof values === 'object') {
    vouched.add(values);
  }
  return values;
}

export function isVouchedFor(values: unknown): boolean {
  return typeof values === 'object' && values !== null && vouched.has(values);
}

/** Checks `values` against the definition's schema; an empty list means valid. */
export function validateValues(definition: ValuesDefinition, values: unknown): ValuesError[] {
  let validate = compiled.get(definition.schema);
  if (!validate) {
    // Always the closed root: the open one is for Helm at install, where the
    // platform injects its own keys; what synth validates is ours alone.
    validate = ajv().compile(valuesJsonSchema({ ...definition, openRoot: false }));
    compiled.set(definition.schema, validate);
  }
  if (validate(values)) {
    return [];
  }
  // An if/then rule reports twice: the failed branch's own error, and "must match then" on the
  // object; the first says what is wrong.
  const errors = (validate.errors ?? []).filter((e) => e.keyword !== 'if');
  return errors.map(describeError).sort((a, b) => a.field.localeCompare(b.field));
}

function describeError(error: ErrorObject): ValuesError {
  const segments = error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'additionalProperties') {
    segments.push(String((error.params as { additionalProperty: string }).additionalProperty));
    return { field: segments.join('.'), message: 'unknown field' };
  }
  if (error.keyword === 'required') {
    segments.push(String((error.params as { missingProperty: string }).missingProperty));
    return { field: segments.join('.'), message: 'is required' };
  }
  const because = error.schemaPath.includes('/then/') ? (error.parentSchema as { description?: string } | undefined)?.description : undefined;
  return { field: segments.join('.') || '(root)', message: `${error.message ?? error.keyword}${because ? ` (${because})` : ''}` };
}

/** The `description` of the schema node at `path`, for comments in values.yaml. */
export function describeValue(schema: TSchema, path: readonly string[]): string | undefined {
  let node: TSchema | undefined = schema;
  for (const segment of path) {
    node = (node?.properties as Record<string, TSchema> | undefined)?.[segment];
  }
  return node?.description as string | undefined;
}
