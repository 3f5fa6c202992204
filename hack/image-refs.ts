/**
 * Lists every image reference of a packages tree (docs/packaging.md),
 * one a line, and fails on a first-party reference without a digest or on a
 * first-party repository pinned at two digests.
 *
 *   npm run image-refs -- [<packages-root>]      (default dist/packages)
 *   npm run image-refs -- --release [<root>]     also refuse the all-zero placeholder digest
 *
 * Exit 1 when a ref is refused, 2 on bad input (lib/errors.ts).
 *
 * Files read, depth-anchored like Cozystack's image_ref_files: <root>/*\/*\/values.yaml
 * and <root>/*\/*\/images/*.tag. Everything deeper (vendored charts/) is upstream's.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'yaml';
import { InputError, isMain, parseArgs, runTool, toolParser, ToolError } from '../lib/cli.js';

/**
 * Repositories under this prefix are built by the Cozystack organisation: the
 * platform's own under ghcr.io/cozystack/cozystack/, this project's beside them.
 * Each must carry a digest.
 */
export const FIRST_PARTY_PREFIX = 'ghcr.io/cozystack/';
const DIGEST = /@sha256:[0-9a-f]{64}$/;
const REF_IN_TEXT = /[^\s"']+@sha256:[0-9a-f]{64}/g;
/** A stand-in for a digest never computed: a release must not ship it (constructs/images.ts carries built digests). */
export const PLACEHOLDER_DIGEST = `sha256:${'0'.repeat(64)}`;

export interface ImageRef {
  readonly file: string;
  readonly ref: string;
}

/** The files that may hold first-party refs. */
export function imageRefFiles(root: string): string[] {
  const files: string[] = [];
  for (const group of dirs(root)) {
    for (const pkg of dirs(join(root, group))) {
      const base = join(root, group, pkg);
      if (existsSync(join(base, 'values.yaml'))) {
        files.push(join(base, 'values.yaml'));
      }
      const images = join(base, 'images');
      if (existsSync(images) && statSync(images).isDirectory()) {
        files.push(...readdirSync(images).filter((f) => f.endsWith('.tag')).sort().map((f) => join(images, f)));
      }
    }
  }
  return files;
}

/** Refs in one file: the five YAML shapes for values files, a regex scrape for anything else. */
export function refsInFile(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  if (!file.endsWith('.yaml')) {
    return text.match(REF_IN_TEXT) ?? [];
  }
  const refs: string[] = [];
  walk(parse(text), refs);
  return refs;
}

function walk(node: unknown, refs: string[]): void {
  if (typeof node === 'string') {
    // Shape 1: a single string holding a digest-pinned ref.
    refs.push(...(node.match(REF_IN_TEXT) ?? []).filter((r) => !r.startsWith('digest=')));
    return;
  }
  if (Array.isArray(node)) {
    node.forEach((item) => walk(item, refs));
    return;
  }
  if (!node || typeof node !== 'object') {
    return;
  }
  const map = node as Record<string, unknown>;
  const prefix = typeof map.registry === 'string' && map.registry ? `${map.registry}/` : '';
  if (typeof map.repository === 'string' && typeof map.digest === 'string') {
    refs.push(`${prefix}${map.repository}@${map.digest}`); // shape 2
    return;
  }
  if (typeof map.repository === 'string' && typeof map.tag === 'string') {
    refs.push(`${prefix}${map.repository}:${map.tag}`); // shape 3 (a bare tag is kept so it can be refused)
    return;
  }
  const handled = new Set<string>();
  const global = map.global as { registry?: { address?: string }; images?: Record<string, { repository?: string; tag?: string }> } | undefined;
  if (global?.registry?.address && global.images) {
    for (const image of Object.values(global.images)) {
      if (image.repository && image.tag) {
        refs.push(`${global.registry.address}/${image.repository}:${image.tag}`); // shape 4
      }
    }
    handled.add('global');
  }
  if (typeof map.platformSourceUrl === 'string' && typeof map.platformSourceRef === 'string') {
    const digest = map.platformSourceRef.replace(/^digest=/, '');
    refs.push(`${map.platformSourceUrl.replace(/^oci:\/\//, '')}@${digest}`); // shape 5
    handled.add('platformSourceUrl').add('platformSourceRef');
  }
  for (const [key, value] of Object.entries(map)) {
    if (!handled.has(key)) {
      walk(value, refs);
    }
  }
}

export interface CollectOptions {
  /** Refuse the all-zero placeholder digest too (a release). @default false */
  readonly release?: boolean;
}

/** Every ref under `root`, checked; throws a ToolError listing every problem. */
export function collectImageRefs(root: string, options: CollectOptions = {}): ImageRef[] {
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new InputError(`${root}: no such directory`);
  }
  const refs = imageRefFiles(root).flatMap((file) => refsInFile(file).map((ref) => ({ file: relative(root, file), ref })));
  const problems: string[] = [];
  const digests = new Map<string, Set<string>>();
  for (const { file, ref } of refs) {
    const repository = ref.replace(/@sha256:.*$/, '').replace(/:[^/:]+$/, '');
    if (!repository.startsWith(FIRST_PARTY_PREFIX)) {
      continue;
    }
    if (!DIGEST.test(ref)) {
      problems.push(`${file}: first-party image ${ref} has no @sha256:<64 hex> digest`);
      continue;
    }
    if (options.release && ref.endsWith(`@${PLACEHOLDER_DIGEST}`)) {
      problems.push(`${file}: first-party image ${ref} carries the all-zero placeholder digest; stamp the digest its build gives (npm run images -- --stamp && npm run synth)`);
      continue;
    }
    const set = digests.get(repository) ?? new Set<string>();
    set.add(ref.slice(ref.indexOf('@') + 1));
    digests.set(repository, set);
  }
  for (const [repository, set] of digests) {
    if (set.size > 1) {
      problems.push(`${repository} is pinned at ${set.size} digests: ${[...set].sort().join(', ')}`);
    }
  }
  if (problems.length > 0) {
    throw new ToolError(problems);
  }
  return refs;
}

export function main(argv: string[]): string | number {
  const parser = toolParser('image-refs', argv, '[--release] [<packages-root>]   (default dist/packages)')
    .option('release', { type: 'boolean', default: false, describe: 'Also refuse the all-zero placeholder digest' });
  const args = parseArgs(parser, argv, { positionals: 1 });
  if (!args) {
    return 0;
  }
  const root = args._[0] ?? join('dist', 'packages');
  const refs = [...new Set(collectImageRefs(root, { release: args.release }).map((r) => r.ref))].sort();
  return refs.map((r) => `${r}\n`).join('');
}

function dirs(path: string): string[] {
  if (!existsSync(path)) {
    return [];
  }
  return readdirSync(path, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

if (isMain(import.meta.url)) {
  runTool('image-refs', main);
}
