/** An L0 ApiObject whose body is type-checked against a Kubernetes model, placeholders allowed. */
import { ApiObject, type ApiObjectProps } from 'cdk8s';
import type { Construct } from 'constructs';
import type { Templated } from './expr.js';

export function templatedObject<T extends { apiVersion?: string; kind?: string }>(
  scope: Construct,
  id: string,
  body: Templated<T> & { apiVersion: string; kind: string },
): ApiObject {
  // cdk8s types metadata fields as plain strings; placeholders become strings when it resolves them.
  return new ApiObject(scope, id, body as unknown as ApiObjectProps);
}
