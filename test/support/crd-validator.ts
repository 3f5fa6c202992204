/**
 * Validates objects against a generated CRD schema the way the apiserver would,
 * short of a real apiserver: ajv for the OpenAPI part (types, enums, required,
 * minLength, defaults) and a real CEL evaluator for x-kubernetes-validations,
 * transition rules (`oldSelf`) included when an old object is given.
 */
import { evaluate } from '@marcbachmann/cel-js';
import { Ajv, type AnySchemaObject } from 'ajv';
import type { DataValidateFunction } from 'ajv/dist/types/index.js';
import addFormats from 'ajv-formats';
import { CustomResourceDefinition } from '../../constructs/crd/custom-resource-definition.js';
import type { KindDefinition } from '../../api/typebox/kind.js';

export interface ValidationResult {
  readonly errors: string[];
  /** The object after defaulting. */
  readonly object: Record<string, unknown>;
}

interface Rule {
  rule: string;
  message: string;
}

export function crdValidator(definition: KindDefinition) {
  let oldRoot: unknown;
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  ajv.addKeyword({ keyword: 'x-kubernetes-preserve-unknown-fields', schemaType: 'boolean' });
  ajv.addKeyword({ keyword: 'x-kubernetes-list-type', schemaType: 'string' });
  ajv.addKeyword({ keyword: 'x-kubernetes-list-map-keys', schemaType: 'array' });
  const cel: DataValidateFunction = function celRules(this: unknown, rules: Rule[], data: unknown, _parent?: AnySchemaObject, ctx?: { instancePath: string }) {
    const errors: { keyword: string; message: string; params: object }[] = [];
    for (const { rule, message } of rules) {
      const context: Record<string, unknown> = { self: data };
      if (/\boldSelf\b/.test(rule)) {
        const old = lookup(oldRoot, ctx?.instancePath ?? '');
        if (old === undefined) {
          continue; // transition rules only run on updates where the field existed
        }
        context.oldSelf = old;
      }
      if (evaluate(rule, context) !== true) {
        errors.push({ keyword: 'x-kubernetes-validations', message, params: { rule } });
      }
    }
    (celRules as DataValidateFunction).errors = errors;
    return errors.length === 0;
  } as unknown as DataValidateFunction;
  ajv.addKeyword({ keyword: 'x-kubernetes-validations', schemaType: 'array', validate: cel, errors: true });
  const validate = ajv.compile(CustomResourceDefinition.openApiSchema(definition));

  return (object: unknown, old?: unknown): ValidationResult => {
    oldRoot = old;
    const copy = structuredClone(object) as Record<string, unknown>;
    const ok = validate(copy);
    const errors = ok ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message}`);
    return { errors, object: copy };
  };
}

function lookup(root: unknown, pointer: string): unknown {
  let node = root;
  for (const segment of pointer.split('/').slice(1)) {
    if (typeof node !== 'object' || node === null) {
      return undefined;
    }
    node = (node as Record<string, unknown>)[segment.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}
