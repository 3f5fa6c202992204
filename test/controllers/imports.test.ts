/**
 * The layering of the controllers: each may import the shared runtime and the
 * API contract (api/), never constructs/ (the synth side) nor the other
 * controller; and the TypeBox schemas (api/v1alpha1/schema, api/typebox) only
 * as types, so no bundle carries TypeBox or the CRD descriptions.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, typeScriptFiles } from '../support/synth.js';

const CONTROLLERS = join(REPO_ROOT, 'controllers');
const OWN = ['address-controller', 'metallb-iad'];

interface Import {
  readonly file: string;
  readonly target: string;
  readonly typeOnly: boolean;
}


/** Every relative import and re-export of a file, resolved to a repository path. */
function importsOf(file: string, text = readFileSync(file, 'utf8')): Import[] {
  const found: Import[] = [];
  const pattern = /^(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?'(\.[^']+)'/gm;
  for (const match of text.matchAll(pattern)) {
    found.push({ file: relative(REPO_ROOT, file), target: relative(REPO_ROOT, resolve(dirname(file), match[2]!)), typeOnly: Boolean(match[1]) });
  }
  return found;
}

function violations(imports: readonly Import[]): string[] {
  return imports.flatMap(({ file, target, typeOnly }) => {
    const own = OWN.find((c) => file.startsWith(`controllers/${c}/`));
    const other = OWN.find((c) => c !== own && target.startsWith(`controllers/${c}/`));
    if (target.startsWith('constructs/')) return [`${file} imports ${target}: controllers never import the synth side`];
    if (other) return [`${file} imports ${target}: a controller never imports the other (shared code goes to api/ or controllers/runtime/)`];
    if (!typeOnly && (target.startsWith('api/v1alpha1/schema/') || target.startsWith('api/typebox/'))) {
      return [`${file} imports ${target} at run time: the schemas are for the constructs; use api/v1alpha1/index.js`];
    }
    return [];
  });
}

describe('controller imports', () => {
  it('reach only the runtime and the API contract', () => {
    const all = typeScriptFiles(CONTROLLERS).flatMap((f) => importsOf(f));
    expect(all.length).toBeGreaterThan(50);
    expect(violations(all)).toEqual([]);
  });

  it('the API module a controller imports at run time pulls in no schema either', () => {
    const api = typeScriptFiles(join(REPO_ROOT, 'api')).filter((f) => !f.includes(`${join('api', 'v1alpha1', 'schema')}`) && !f.includes(join('api', 'typebox')));
    const runtime = api.flatMap((f) => importsOf(f)).filter((i) => !i.typeOnly);
    expect(runtime.filter((i) => i.target.startsWith('api/v1alpha1/schema/') || i.target.startsWith('api/typebox/'))).toEqual([]);
    expect(api.flatMap((f) => readFileSync(f, 'utf8').match(/^import (?!type )[^;]*'@sinclair\/typebox'/gm) ?? [])).toEqual([]);
  });

  it('catches each kind of violation', () => {
    const file = join(CONTROLLERS, 'metallb-iad', 'x.ts');
    const text = [
      "import { familyOf } from '../address-controller/decisions.js';",
      "import { KINDS } from '../../constructs/charts/address-controller.js';",
      "import { IPAddressSpec } from '../../api/v1alpha1/schema/ipaddress.js';",
      "import type { IPAddressSpec as T } from '../../api/v1alpha1/schema/ipaddress.js';",
      "import { CONDITION } from '../../api/v1alpha1/index.js';",
      "export { keyOf } from '../runtime/kube.js';",
    ].join('\n');
    expect(violations(importsOf(file, text))).toEqual([
      'controllers/metallb-iad/x.ts imports controllers/address-controller/decisions.js: a controller never imports the other (shared code goes to api/ or controllers/runtime/)',
      'controllers/metallb-iad/x.ts imports constructs/charts/address-controller.js: controllers never import the synth side',
      'controllers/metallb-iad/x.ts imports api/v1alpha1/schema/ipaddress.js at run time: the schemas are for the constructs; use api/v1alpha1/index.js',
    ]);
  });
});

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
