#!/usr/bin/env node
// `npm run synth`: runs synth/main.ts from a prebuilt esbuild bundle, so that a
// run costs node's start plus synthesis instead of tsx compiling ~80 modules.
// The bundle sits in .cache/synth/ under a fingerprint of every source it is
// built from; when any of them changes (or the lockfile), the next run rebuilds
// it first (~0.5 s). Same bytes out either way: test/synth/bin.test.ts compares
// the two.
//
// What a run costs besides synthesis, and how it is kept small (README "synth"):
// - the bundle is CommonJS, compiled through node:vm from a V8 code cache kept
//   beside it (written when a run exits, so it holds every function that run
//   compiled): no parsing or compiling of ~1.1 MB of JavaScript. V8 checks the
//   cache against the source, its version and flags; a refused one is rewritten;
// - module bodies that only --help or synth push need are not run at start
//   (string-width's ICU segmenter and emoji tables, child_process), and cdk8s's
//   private copy of yaml is the project's own (see the plugins below).
//
// Plain JavaScript on purpose: this file must run before anything is compiled.
import { createRequire } from 'node:module';

// Builtins through require: each `import` of one makes the ESM loader wrap it as a module, a few ms at every start.
const require = createRequire(import.meta.url);
const { createHash } = require('node:crypto');
const { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { fileURLToPath } = require('node:url');
const { Script } = require('node:vm');

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
/** Everything synth/main.ts can import, and what decides how it is bundled. */
const SOURCES = ['api', 'lib', 'constructs', 'synth', 'package.json', 'package-lock.json', 'tsconfig.json'];

function files(path) {
  const full = join(ROOT, path);
  if (!existsSync(full)) {
    return [];
  }
  if (!statSync(full).isDirectory()) {
    return [full];
  }
  return readdirSync(full, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|json|mjs)$/.test(e.name))
    .map((e) => join(e.parentPath ?? e.path, e.name));
}

/** sha256 over every source's path and bytes, in a stable order. */
export function fingerprint() {
  const hash = createHash('sha256');
  for (const file of SOURCES.flatMap(files).sort()) {
    // Every path is ROOT/...: slicing is path.relative without its resolve() calls, a tenth of a run's start.
    hash.update(file.slice(ROOT.length + 1)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/** Writes beside the final name and renames, so two runs at once never see half a file. */
function writeAtomically(file, bytes) {
  const staging = `${file}.${process.pid}.tmp`;
  writeFileSync(staging, bytes);
  renameSync(staging, file);
}

/**
 * yargs lays out --help with string-width (three versions: its own, cliui's,
 * wrap-ansi's), whose module bodies build an Intl.Segmenter and an
 * \\p{RGI_Emoji} regular expression: 30-60 ms of ICU loading at every start, for
 * help text only. Each import of it gets a stand-in that loads that importer's
 * own version on its first call, so help reads the same and a run without help
 * never pays for it.
 */
const lazyStringWidth = {
  name: 'lazy-string-width',
  setup(build) {
    build.onResolve({ filter: /^string-width$/ }, async (args) => {
      if (args.pluginData === 'real') {
        return undefined;
      }
      const real = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: 'real' });
      if (real.errors.length > 0) {
        return { errors: real.errors };
      }
      return { path: real.path, namespace: 'lazy-string-width' };
    });
    build.onLoad({ filter: /.*/, namespace: 'lazy-string-width' }, (args) => ({
      contents: `let real;\nexport default function stringWidth(string, options) {\n  real ??= require(${JSON.stringify(args.path)}).default;\n  return real(string, options);\n}\n`,
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
  },
};

/**
 * child_process (and the net and dgram modules it loads) is needed only to run
 * a credential helper (synth push) or to fetch a URL (cdk8s's Yaml.load, never
 * called here), yet bundled modules require it, and read its functions, at
 * load. They get a stand-in holding each of its exports (all functions or
 * classes) as a function that requires the real module on its first call.
 */
const CHILD_PROCESS_EXPORTS = ['ChildProcess', '_forkChild', 'exec', 'execFile', 'execFileSync', 'execSync', 'fork', 'spawn', 'spawnSync'];
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(build) {
    build.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      args.namespace === 'lazy-child-process' ? { path: 'node:child_process', external: true } : { path: 'child_process', namespace: 'lazy-child-process' },
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-child-process' }, () => ({
      contents: [
        'let real;',
        "const load = () => (real ??= require('node:child_process'));",
        `for (const key of ${JSON.stringify(CHILD_PROCESS_EXPORTS)}) {`,
        '  exports[key] = function (...args) {',
        '    const target = load()[key];',
        '    return new.target ? Reflect.construct(target, args, new.target) : target.apply(this, args);',
        '  };',
        '}',
      ].join('\n'),
      loader: 'js',
    }));
  },
};

/**
 * cdk8s ships its own copy of yaml inside its package, so the bundle held two
 * (the module bodies of both ran at every start). Where that copy is the same
 * version as the project's, cdk8s's imports resolve to the project's.
 */
const oneYaml = {
  name: 'one-yaml',
  setup(build) {
    const version = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
    const nested = join(ROOT, 'node_modules', 'cdk8s', 'node_modules', 'yaml');
    const same = existsSync(nested) && version(nested) === version(join(ROOT, 'node_modules', 'yaml'));
    build.onResolve({ filter: /^yaml$/ }, (args) =>
      same && args.pluginData !== 'one-yaml' && args.importer.startsWith(join(ROOT, 'node_modules', 'cdk8s') + '/')
        ? build.resolve('yaml', { kind: args.kind, resolveDir: ROOT, pluginData: 'one-yaml' })
        : undefined,
    );
  },
};

/** The bundle for the current sources (CommonJS), built when missing. */
export async function synthBundle() {
  const dir = join(ROOT, '.cache', 'synth');
  const bundle = join(dir, `synth-${fingerprint()}.cjs`);
  if (existsSync(bundle)) {
    return bundle;
  }
  const { build } = await import('esbuild');
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  mkdirSync(dir, { recursive: true });
  const result = await build({
    entryPoints: [join(ROOT, 'synth', 'main.ts')],
    write: false,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    minifySyntax: true,
    // ASCII only (esbuild escapes the rest), so the source reads as one-byte latin1 without decoding.
    charset: 'ascii',
    // import.meta.url means the bundle's own URL, as it did in an ESM bundle.
    define: { __COZY_ADDRESSES_VERSION__: JSON.stringify(version), 'import.meta.url': '__bundle_url' },
    // The file is node's CommonJS module wrapper around the bundle, compiled as it is read.
    banner: { js: "(function (exports, require, module, __filename, __dirname) {const __bundle_url = require('node:url').pathToFileURL(__filename).href;" },
    footer: { js: '})' },
    plugins: [lazyStringWidth, lazyChildProcess, oneYaml],
    logLevel: 'warning',
  });
  writeAtomically(bundle, result.outputFiles[0].contents);
  for (const old of readdirSync(dir).filter((f) => f.startsWith('synth-') && !f.startsWith(`${bundle.slice(dir.length + 1)}`))) {
    rmSync(join(dir, old), { force: true });
  }
  return bundle;
}

/**
 * Runs a CommonJS bundle as node would, compiled from (and, when missing or
 * stale, into) its code cache. Returns its exports and what became of the cache:
 * 'hit', 'miss' (none yet) or 'rejected' (V8 refused it); either of the last two
 * is rewritten when the process exits.
 */
export function runBundle(bundle) {
  const cacheFile = `${bundle}.v8-${process.versions.v8}.cache`;
  const cachedData = existsSync(cacheFile) ? readFileSync(cacheFile) : undefined;
  const script = new Script(readFileSync(bundle, 'latin1'), { filename: bundle, cachedData });
  if (cachedData === undefined || script.cachedDataRejected) {
    // At exit, the cache holds every function this run compiled, not only the top level.
    process.once('exit', () => {
      try {
        writeAtomically(cacheFile, script.createCachedData());
      } catch {
        // A read-only checkout runs without a cache.
      }
    });
  }
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, dirname(bundle));
  return { exports: module.exports, cache: cachedData === undefined ? 'miss' : script.cachedDataRejected ? 'rejected' : 'hit' };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  runBundle(await synthBundle());
}
