/**
 * `npm run build`: bundles each controller entrypoint into one ESM file under
 * build/<controller>/main.mjs (git-ignored; dist/ holds only the synthesized
 * artifact). controllers/Dockerfile copies one into a distroless Node image.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { EXIT, InputError, isMain, parseArgs, runTool, toolParser } from '../lib/cli.js';
import { REPO_ROOT } from './lib/paths.js';
import { VERSION } from '../lib/version.js';

/** Every controllers/<name>/main.ts (controllers/runtime is the shared library). */
export function controllerNames(): string[] {
  const root = join(REPO_ROOT, 'controllers');
  return readdirSync(root)
    .filter((name) => existsSync(join(root, name, 'main.ts')))
    .sort();
}

/** The controllers named (all when none); an unknown name is bad input. */
export function selectControllers(given: readonly string[]): string[] {
  const names = controllerNames();
  const unknown = given.filter((name) => !names.includes(name));
  if (unknown.length > 0) {
    throw new InputError(unknown.map((name) => `unknown controller ${JSON.stringify(name)} (known: ${names.join(', ')})`));
  }
  return given.length > 0 ? [...given] : names;
}

async function main(argv: string[]): Promise<number> {
  const names = controllerNames();
  const parser = toolParser('build', argv, `[<controller>...]   (default: all of ${names.join(', ')})`);
  const args = parseArgs(parser, argv, { positionals: names.length });
  if (!args) {
    return EXIT.OK;
  }
  for (const name of selectControllers(args._)) {
    const outdir = join(REPO_ROOT, 'build', name);
    rmSync(outdir, { recursive: true, force: true });
    const result = await build({
      entryPoints: [join(REPO_ROOT, 'controllers', name, 'main.ts')],
      outfile: join(outdir, 'main.mjs'),
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'esm',
      minify: false,
      sourcemap: 'linked',
      legalComments: 'linked',
      metafile: true,
      // Some bundled CommonJS dependencies call require(); give the ESM bundle one.
      banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
      define: { __COZY_ADDRESSES_VERSION__: JSON.stringify(VERSION) },
      logLevel: 'warning',
    });
    const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
    process.stdout.write(`build: ${name} -> build/${name}/main.mjs (${(bytes / 2 ** 20).toFixed(1)} MiB with map)\n`);
  }
  return EXIT.OK;
}

if (isMain(import.meta.url)) {
  runTool('build', main);
}
