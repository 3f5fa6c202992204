/**
 * Evaluates a rendered ValidatingAdmissionPolicy the way the apiserver does,
 * with a real CEL evaluator: matchConditions, then variables in order, then
 * validations with their messageExpressions.
 */
import { evaluate } from '@marcbachmann/cel-js';

interface Policy {
  spec: {
    matchConditions?: { name: string; expression: string }[];
    variables?: { name: string; expression: string }[];
    validations: { expression: string; messageExpression?: string; message?: string; reason?: string }[];
  };
}

export interface AdmissionRequest {
  readonly object: unknown;
  readonly oldObject: unknown;
  readonly username: string;
  /** request.userInfo.groups; none by default. */
  readonly groups?: readonly string[];
  /** The parameter object (a policy with a paramKind): evaluated once per parameter, as the apiserver does. */
  readonly params?: unknown;
  /** The namespace of a namespaced object; null for a cluster-scoped one. */
  readonly namespaceObject?: unknown;
}

export type Verdict = { matched: false } | { matched: true; allowed: boolean; messages: string[] };

export function admit(policy: Policy, request: AdmissionRequest): Verdict {
  const context: Record<string, unknown> = {
    object: request.object,
    oldObject: request.oldObject,
    request: { userInfo: { username: request.username, groups: [...(request.groups ?? [])] } },
    params: request.params ?? null,
    namespaceObject: request.namespaceObject ?? null,
  };
  for (const condition of policy.spec.matchConditions ?? []) {
    if (evaluate(condition.expression, context) !== true) {
      return { matched: false };
    }
  }
  const variables: Record<string, unknown> = {};
  for (const variable of policy.spec.variables ?? []) {
    variables[variable.name] = evaluate(variable.expression, { ...context, variables });
  }
  const messages: string[] = [];
  for (const validation of policy.spec.validations) {
    const scope = { ...context, variables };
    if (evaluate(validation.expression, scope) !== true) {
      messages.push(
        validation.messageExpression ? String(evaluate(validation.messageExpression, scope)) : (validation.message ?? ''),
      );
    }
  }
  return { matched: true, allowed: messages.length === 0, messages };
}
