/**
 * The controllers' bundles: each carries the shared runtime and the API
 * contract, and none of TypeBox, the CRD schemas or constructs/. Which
 * imports may reach what is the house test's (test/house.test.ts); this
 * builds each bundle and reads what went in.
 */
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/synth.js';

const CONTROLLERS = join(REPO_ROOT, 'controllers');
const OWN = ['address-controller', 'metallb-iad'];

describe('controller bundles', () => {
  it.each(OWN)('%s bundles without TypeBox, the CRD schemas or anything of constructs/', async (name) => {
    const result = await build({
      entryPoints: [join(CONTROLLERS, name, 'main.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((i) => i.startsWith('api/'))).toBe(true);
    expect(inputs.filter((i) => i.includes('@sinclair/typebox') || i.startsWith('api/v1alpha1/schema/') || i.startsWith('api/typebox/') || i.startsWith('constructs/'))).toEqual([]);
  }, 60_000);
});
