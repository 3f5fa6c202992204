/**
 * The floors of the house, read from every import of its sources (.ts and
 * .mjs, static, dynamic, `export … from`, `require`): nothing imports upward.
 *
 *   hack/                       the tools: may import anything
 *   synth/                      above constructs/
 *   constructs/  controllers/   side by side, never importing each other;
 *                               nor one controller the other (shared code goes
 *                               to controllers/runtime/ or api/)
 *   api/  lib/                  the bottom floor: import nothing above them
 *
 * Tests (test/) are no floor: they may import anything, and nothing but hack/
 * imports them. The TypeBox schemas (api/v1alpha1/schema, api/typebox) are
 * imported only as types outside constructs/, synth/ and hack/, so no
 * controller bundle carries TypeBox or the CRD descriptions
 * (test/controllers/imports.test.ts builds the bundles).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/synth.js';

const ROOMS = ['api', 'lib', 'constructs', 'controllers', 'synth', 'hack'] as const;
type Room = (typeof ROOMS)[number];

/** The rooms each room may import, itself included. */
const MAY_IMPORT: Record<Room, readonly string[]> = {
  api: ['api', 'lib'],
  lib: ['lib', 'api'],
  constructs: ['constructs', 'api', 'lib'],
  controllers: ['controllers', 'api', 'lib'],
  synth: ['synth', 'constructs', 'api', 'lib'],
  hack: [...ROOMS, 'test'],
};

/** The controllers, each a room of its own inside controllers/ (runtime/ is theirs to share). */
const CONTROLLERS = ['address-controller', 'metallb-iad'];

/** What a controller or api/ may import only as types. */
const SCHEMAS = ['api/v1alpha1/schema/', 'api/typebox/'];

interface Import {
  /** Repository path of the importing file, `/`-separated. */
  readonly file: string;
  /** The specifier as written. */
  readonly specifier: string;
  /** What a relative specifier names, as a repository path; undefined for a package or builtin. */
  readonly target?: string;
  /** `import type`, `export type`, or every name of the clause a type; `import('x')` in a type. */
  readonly typeOnly: boolean;
}

const posix = (path: string) => path.split(sep).join('/');

/** Every .ts and .mjs file under `dir`. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** Every import of a file, parsed by TypeScript (so a specifier in a comment or a string is none). */
function importsOf(file: string, text = readFileSync(file, 'utf8')): Import[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, file.endsWith('.mjs') ? ts.ScriptKind.JS : ts.ScriptKind.TS);
  const from = posix(relative(REPO_ROOT, file));
  const found: Import[] = [];
  const add = (node: ts.Expression | undefined, typeOnly: boolean) => {
    if (node && ts.isStringLiteralLike(node)) {
      const specifier = node.text;
      const target = specifier.startsWith('.') ? posix(relative(REPO_ROOT, resolve(dirname(file), specifier))) : undefined;
      found.push({ file: from, specifier, target, typeOnly });
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const allTypes = Boolean(clause && !clause.name && named && named.length > 0 && named.every((e) => e.isTypeOnly));
      add(node.moduleSpecifier, Boolean(clause?.isTypeOnly) || allTypes);
    } else if (ts.isExportDeclaration(node)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      add(node.moduleSpecifier, node.isTypeOnly || Boolean(named && named.length > 0 && named.every((e) => e.isTypeOnly)));
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal as ts.Expression, true);
    } else if (ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) {
      add(node.arguments[0], false);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const roomOf = (path: string) => path.split('/')[0]!;
const controllerOf = (path: string) => CONTROLLERS.find((c) => path.startsWith(`controllers/${c}/`));

/** One line per import that breaks a rule of the house, naming file and import. */
function violations(imports: readonly Import[]): string[] {
  return imports.flatMap(({ file, specifier, target, typeOnly }) => {
    if (target === undefined) {
      return [];
    }
    const room = roomOf(file) as Room;
    const to = roomOf(target);
    const where = `${file} imports '${specifier}' (${target})`;
    const inHouse = (ROOMS as readonly string[]).includes(to) || to === 'test';
    if (inHouse && !MAY_IMPORT[room].includes(to)) {
      return [`${where}: ${room}/ never imports ${to}/ (${to === 'test' ? 'only hack/ imports the tests' : `it may import ${MAY_IMPORT[room].map((r) => `${r}/`).join(', ')}`})`];
    }
    const own = controllerOf(file);
    const other = controllerOf(target);
    if (own && other && own !== other) {
      return [`${where}: a controller never imports the other (shared code goes to api/ or controllers/runtime/)`];
    }
    const schema = SCHEMAS.some((s) => target.startsWith(s));
    if (schema && !typeOnly && (room === 'controllers' || (room === 'api' && !SCHEMAS.some((s) => file.startsWith(s))))) {
      return [`${where} at run time: the schemas are for the constructs; use api/v1alpha1/index.js, or import type`];
    }
    return [];
  });
}

describe('the house', () => {
  const imports = ROOMS.flatMap((room) => sourceFiles(join(REPO_ROOT, room))).flatMap((file) => importsOf(file));

  it('every room is read, and its imports found', () => {
    for (const room of ROOMS) {
      expect(imports.filter((i) => roomOf(i.file) === room && i.target !== undefined).length, room).toBeGreaterThan(5);
    }
    expect(imports.some((i) => i.file === 'synth/bin.mjs')).toBe(true);
  });

  it('nothing imports upward, nor a sibling it must not', () => {
    expect(violations(imports)).toEqual([]);
  });

  it('api/ outside the schemas imports TypeBox only as types', () => {
    expect(imports.filter((i) => roomOf(i.file) === 'api' && !SCHEMAS.some((s) => i.file.startsWith(s)) && i.specifier === '@sinclair/typebox' && !i.typeOnly)).toEqual([]);
  });
});

describe('the house test', () => {
  const at = (path: string) => join(REPO_ROOT, path);

  it('reads every form of import, and none in a comment or a string', () => {
    const text = [
      '// import { x } from "../hack/a.js";',
      "const s = \"import { y } from '../hack/b.js'\";",
      "import d, { e } from '../constructs/d.js';",
      'import {',
      '  f,',
      '  type g,',
      "} from '../synth/f.js';",
      "import type { H } from '../hack/h.js';",
      "import { type I } from '../hack/i.js';",
      "import '../hack/side-effect.js';",
      "export * from '../synth/all.js';",
      "export type { J } from '../synth/j.js';",
      "const k = await import('../hack/k.js');",
      "type L = import('../synth/l.js').L;",
      "import { m } from 'node:fs';",
    ].join('\n');
    expect(importsOf(at('api/x.ts'), text).map((i) => `${i.specifier}${i.typeOnly ? ' (type)' : ''}`)).toEqual([
      '../constructs/d.js',
      '../synth/f.js',
      '../hack/h.js (type)',
      '../hack/i.js (type)',
      '../hack/side-effect.js',
      '../synth/all.js',
      '../synth/j.js (type)',
      '../hack/k.js',
      '../synth/l.js (type)',
      'node:fs',
    ]);
    expect(importsOf(at('synth/x.mjs'), "const { a } = require('../hack/a.js');\nconst b = await import('../controllers/b.js');").map((i) => i.target)).toEqual([
      'hack/a.js',
      'controllers/b.js',
    ]);
  });

  it('fails, naming file and import, on each kind of violation', () => {
    const sources: [string, string][] = [
      ['lib/x.ts', "import { a } from '../synth/a.js';\nimport { b } from '../api/b.js';"],
      ['api/x.ts', "import type { C } from '../constructs/c.js';\nimport { S } from './v1alpha1/schema/s.js';\nimport type { T } from './v1alpha1/schema/t.js';"],
      ['constructs/x.ts', "import { d } from '../controllers/runtime/d.js';\nimport { e } from '../synth/e.js';\nimport { f } from '../lib/f.js';"],
      ['controllers/metallb-iad/x.ts', "import { g } from '../address-controller/g.js';\nimport { h } from '../../constructs/h.js';\nimport { i } from '../runtime/i.js';\nimport { J } from '../../api/typebox/j.js';"],
      ['synth/x.mjs', "const { k } = require('../hack/k.js');\nimport { l } from '../controllers/runtime/l.js';\nimport { m } from '../constructs/m.js';"],
      ['lib/y.ts', "import { n } from '../test/support/n.js';"],
      ['hack/x.ts', "import { o } from '../synth/o.js';\nimport { p } from '../test/support/p.js';\nimport { q } from '../controllers/metallb-iad/q.js';"],
    ];
    expect(violations(sources.flatMap(([path, text]) => importsOf(at(path), text)))).toEqual([
      "lib/x.ts imports '../synth/a.js' (synth/a.js): lib/ never imports synth/ (it may import lib/, api/)",
      "api/x.ts imports '../constructs/c.js' (constructs/c.js): api/ never imports constructs/ (it may import api/, lib/)",
      "api/x.ts imports './v1alpha1/schema/s.js' (api/v1alpha1/schema/s.js) at run time: the schemas are for the constructs; use api/v1alpha1/index.js, or import type",
      "constructs/x.ts imports '../controllers/runtime/d.js' (controllers/runtime/d.js): constructs/ never imports controllers/ (it may import constructs/, api/, lib/)",
      "constructs/x.ts imports '../synth/e.js' (synth/e.js): constructs/ never imports synth/ (it may import constructs/, api/, lib/)",
      "controllers/metallb-iad/x.ts imports '../address-controller/g.js' (controllers/address-controller/g.js): a controller never imports the other (shared code goes to api/ or controllers/runtime/)",
      "controllers/metallb-iad/x.ts imports '../../constructs/h.js' (constructs/h.js): controllers/ never imports constructs/ (it may import controllers/, api/, lib/)",
      "controllers/metallb-iad/x.ts imports '../../api/typebox/j.js' (api/typebox/j.js) at run time: the schemas are for the constructs; use api/v1alpha1/index.js, or import type",
      "synth/x.mjs imports '../hack/k.js' (hack/k.js): synth/ never imports hack/ (it may import synth/, constructs/, api/, lib/)",
      "synth/x.mjs imports '../controllers/runtime/l.js' (controllers/runtime/l.js): synth/ never imports controllers/ (it may import synth/, constructs/, api/, lib/)",
      "lib/y.ts imports '../test/support/n.js' (test/support/n.js): lib/ never imports test/ (only hack/ imports the tests)",
    ]);
  });
});
