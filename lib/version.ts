/**
 * This build's version, the one version source: package.json's `version`,
 * baked into bundles by esbuild's `define` (hack/build.ts for the controllers,
 * synth/bin.mjs for synth) and read from package.json when run from source.
 */
import { readFileSync } from 'node:fs';

declare const __COZY_ADDRESSES_VERSION__: string | undefined;

function fromPackageJson(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

export const VERSION: string = typeof __COZY_ADDRESSES_VERSION__ === 'string' ? __COZY_ADDRESSES_VERSION__ : fromPackageJson();
