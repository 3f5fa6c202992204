#!/usr/bin/env node
// `npm run synth`: runs synth/main.ts from a prebuilt esbuild bundle, so that a
// run costs node's start plus synthesis instead of tsx compiling ~80 modules
// and importing all of cdk8s-plus. The bundle sits in .cache/synth/ under a
// fingerprint of every source it is built from; when any of them changes (or
// the lockfile), the next run rebuilds it first (~0.5 s). Same bytes out
// either way: test/synth/cli.test.ts compares the two.
//
// Plain JavaScript on purpose: this file must run before anything is compiled.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
/** Everything synth/main.ts can import, and what decides how it is bundled. */
const SOURCES = ['api', 'constructs', 'synth', 'hack/lib', 'controllers/runtime', 'package.json', 'package-lock.json', 'tsconfig.json'];

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
    hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/** The bundle for the current sources, built when missing. */
export async function synthBundle() {
  const dir = join(ROOT, '.cache', 'synth');
  const bundle = join(dir, `synth-${fingerprint()}.mjs`);
  if (existsSync(bundle)) {
    return bundle;
  }
  const { build } = await import('esbuild');
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  mkdirSync(dir, { recursive: true });
  // Built beside its final name and renamed, so two runs at once never see half a file.
  const staging = `${bundle}.${process.pid}.tmp`;
  await build({
    entryPoints: [join(ROOT, 'synth', 'main.ts')],
    outfile: staging,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    minifySyntax: true,
    define: { __COZY_ADDRESSES_VERSION__: JSON.stringify(version) },
    // Some bundled CommonJS dependencies call require(); give the ESM bundle one.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  renameSync(staging, bundle);
  for (const old of readdirSync(dir).filter((f) => f.startsWith('synth-') && join(dir, f) !== bundle)) {
    rmSync(join(dir, old), { force: true });
  }
  return bundle;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await import(pathToFileURL(await synthBundle()).href);
}
