/**
 * `npm run images`: each controller's container image, without a Docker
 * engine, as an OCI image layout under build/images/<controller>/:
 *
 *   layer 1  glibc and the C++ runtime from Debian packages, /etc/passwd with nonroot (65532), /tmp
 *   layer 2  the Node runtime (/nodejs/bin/node) from the npm registry
 *   layer 3  the controller's esbuild bundle (/app, npm run build)
 *   config   USER, ENTRYPOINT, CMD, EXPOSE and WORKDIR read from controllers/Dockerfile (one for both)
 *
 * Every input is pinned (hack/images/inputs.ts) and every byte is a function
 * of them: two builds give one digest.
 *
 *   npm run images                                   build both, print name and digest
 *   npm run images -- address-controller             build one
 *   npm run images -- --push HOST:PORT [--plain-http] [--username U --password-stdin]
 *                                                    push each (lib/oci, as synth push), tag = the release version
 *   npm run images -- --stamp                        write the digests into constructs/images.ts
 *   npm run images -- --check                        rebuild; exit 1 when a digest is not the stamped one
 *
 * constructs/images.ts carries the digests this build gives for the commit's
 * sources, so dist/ names the very bytes a release pushes: --check (CI) proves
 * the stamp is current, and --push without --stamp refuses an image whose digest
 * is not the stamped one.
 *
 * Exit codes: 0 ok, 1 a digest differs from the stamp, 2 bad input, 3 internal (lib/errors.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { IMAGES } from '../constructs/images.js';
import { RELEASE_VERSION } from '../constructs/version.js';
import { controllerNames, selectControllers } from './build.js';
import { debianPackage, DEBIAN_LIBRARIES, npmTarball, NODE_RUNTIME } from './images/inputs.js';
import { ociImage, type ImageConfig, type OciImage } from './images/oci-image.js';
import { appEntries, baseEntries, debEntries, nodeEntries } from './images/rootfs.js';
import { EXIT, InputError, isMain, parseArgs, runTool, toolParser, ToolError } from '../lib/cli.js';
import { pushLayout } from '../lib/oci/push.js';
import { authFlags, credentialsFrom } from '../lib/oci/registry-auth.js';
import type { TarEntry } from '../lib/oci/tar.js';
import { REPO_ROOT } from './lib/paths.js';

/** The IMAGES key of a controller: address-controller → addressController. */
export function imageKey(controller: string): keyof typeof IMAGES {
  const key = controller.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  if (!(key in IMAGES)) {
    throw new InputError(`controller ${controller} has no pin in constructs/images.ts`);
  }
  return key as keyof typeof IMAGES;
}

/** The controllers' one Dockerfile (`--build-arg CONTROLLER=<name>`): an input of every image's config. */
export const DOCKERFILE = join(REPO_ROOT, 'controllers', 'Dockerfile');

/** USER, ENTRYPOINT, CMD, EXPOSE and WORKDIR of the runtime stage of a Dockerfile. */
export function dockerfileConfig(dockerfile: string): Omit<ImageConfig, 'env' | 'labels'> {
  const text = readFileSync(dockerfile, 'utf8');
  const runtime = text.slice(text.lastIndexOf('\nFROM '));
  const instruction = (name: string) => runtime.match(new RegExp(`^${name}\\s+(.+)$`, 'm'))?.[1]?.trim();
  const json = (name: string): string[] => {
    const value = instruction(name);
    if (!value?.startsWith('[')) {
      throw new ToolError([`${dockerfile}: ${name} must be in JSON (exec) form`], EXIT.INTERNAL);
    }
    return JSON.parse(value) as string[];
  };
  return {
    user: instruction('USER') ?? '0',
    entrypoint: json('ENTRYPOINT'),
    cmd: json('CMD'),
    workingDir: instruction('WORKDIR') ?? '/',
    exposedPorts: (instruction('EXPOSE') ?? '').split(/\s+/).filter(Boolean).map(Number),
  };
}

/** What to run after the controllers' sources changed: the --check failure says exactly this. */
export const RESTAMP_COMMAND = 'npm run images -- --stamp && npm run synth';

let sharedLayers: { base: TarEntry[]; node: TarEntry[] } | undefined;

/** The base and Node layers' entries, the same for every controller: read once per run. */
function runtimeLayers(): { base: TarEntry[]; node: TarEntry[] } {
  sharedLayers ??= {
    base: [...baseEntries(), ...DEBIAN_LIBRARIES.flatMap((deb) => debEntries(debianPackage(deb)))],
    node: nodeEntries(npmTarball()),
  };
  return sharedLayers;
}

/** One controller's image from its bundle (build/<controller>/) and the pinned inputs. */
export function controllerImage(controller: string): OciImage {
  const bundle = join(REPO_ROOT, 'build', controller);
  if (!existsSync(join(bundle, 'main.mjs'))) {
    throw new ToolError([`build/${controller}/main.mjs is missing: npm run build first`], EXIT.INTERNAL);
  }
  const { base, node } = runtimeLayers();
  const config: ImageConfig = {
    ...dockerfileConfig(DOCKERFILE),
    env: ['PATH=/nodejs/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', `NODE_VERSION=${NODE_RUNTIME.version}`],
    labels: {
      'org.opencontainers.image.title': controller,
      'org.opencontainers.image.version': RELEASE_VERSION,
      'org.opencontainers.image.source': 'https://github.com/cozystack/cozy-addresses',
      'org.opencontainers.image.base.name': `npm:${NODE_RUNTIME.name}@${NODE_RUNTIME.version} + ${DEBIAN_LIBRARIES.map((d) => `deb:${d.name}=${d.version}`).join(' ')}`,
    },
  };
  return ociImage([base, node, appEntries(bundle)], config, RELEASE_VERSION);
}

export function writeLayout(dir: string, image: OciImage): void {
  rmSync(dir, { recursive: true, force: true });
  for (const [path, content] of image.files) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/** The `digest: ...` line of a controller's pin in the images file (the one --stamp rewrites). */
function digestLine(key: string): RegExp {
  return new RegExp(`(\\n  ${key}: \\{[\\s\\S]*?\\n    digest: )([^,\\n]+)(,)`);
}

/** The digest stamped for `controller` in the images file, as written there (a quoted literal, or an expression). */
export function stampedDigest(file: string, controller: string): string {
  const key = imageKey(controller);
  const found = digestLine(key).exec(readFileSync(file, 'utf8'));
  if (!found) {
    throw new InputError(`${file}: no "${key}: { ... digest: ... }" block`);
  }
  return found[2]!.replace(/^'(.*)'$/, '$1');
}

/** Rewrites the digest of `controller`'s pin in the images file; returns whether it changed. */
export function stampDigest(file: string, controller: string, digest: string): boolean {
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) {
    throw new InputError(`--stamp: ${digest} is not sha256:<64 hex>`);
  }
  const text = readFileSync(file, 'utf8');
  const key = imageKey(controller);
  const block = digestLine(key);
  if (!block.test(text)) {
    throw new InputError(`${file}: no "${key}: { ... digest: ... }" block to stamp`);
  }
  const next = text.replace(block, `$1'${digest}'$3`);
  if (next !== text) {
    writeFileSync(file, next);
  }
  return next !== text;
}

/** The line --check and --push print for an image whose build is not the stamped digest. */
export function digestMismatch(controller: string, file: string, stamped: string, built: string): string {
  const shown = relative(REPO_ROOT, file);
  return `${controller}: stamped ${stamped} (${shown.startsWith('..') ? file : shown}), built ${built}`;
}

/**
 * Each built digest against the one stamped in `file`: a line per image that
 * matches, and per image that does not (stamped vs built), then the command
 * that re-stamps.
 */
export function compareWithStamps(file: string, built: ReadonlyMap<string, string>): { matched: string[]; mismatches: string[] } {
  const matched: string[] = [];
  const mismatches: string[] = [];
  for (const [controller, digest] of built) {
    const stamped = stampedDigest(file, controller);
    if (stamped === digest) {
      matched.push(`${controller} ${digest} is the stamped digest`);
    } else {
      mismatches.push(digestMismatch(controller, file, stamped, digest));
    }
  }
  if (mismatches.length > 0) {
    mismatches.push(`what the images hold changed since the stamp: run ${RESTAMP_COMMAND}, and commit both`);
  }
  return { matched, mismatches };
}

export async function main(argv: string[]): Promise<number> {
  const names = controllerNames();
  const parser = authFlags(
    toolParser('images', argv, `[<controller>...] [--out DIR] [--push HOST:PORT [--plain-http] [--username U --password-stdin]] [--stamp] [--check]   (controllers: ${names.join(', ')})`)
      .option('out', { type: 'string', default: join(REPO_ROOT, 'build', 'images'), describe: 'Where the OCI layouts go, one folder per controller' })
      .option('push', { type: 'string', describe: 'Registry host[:port] to push each image to' })
      .option('plain-http', { type: 'boolean', default: false, describe: 'HTTP instead of HTTPS (a registry on loopback)' }),
  )
    .option('stamp', { type: 'boolean', default: false, describe: 'Write the built digests into the images file' })
    .option('check', { type: 'boolean', default: false, describe: 'Write nothing; exit 1 when a built digest is not the one stamped in the images file' })
    .option('images-file', { type: 'string', default: join(REPO_ROOT, 'constructs', 'images.ts'), describe: 'The pins --stamp rewrites' })
    .option('skip-build', { type: 'boolean', default: false, describe: 'Use the bundles already in build/ (npm run build)' });
  const args = parseArgs(parser, argv, { positionals: names.length });
  if (!args) {
    return EXIT.OK;
  }
  const selected = selectControllers(args._);
  if ((args['plain-http'] || args.username || args['password-stdin']) && !args.push) {
    throw new InputError('--plain-http, --username and --password-stdin go with --push');
  }
  if (args.check && (args.push || args.stamp)) {
    throw new InputError('--check writes nothing: it goes without --push and --stamp');
  }
  if (!args['skip-build']) {
    const built = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'hack', 'build.ts'), ...selected], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    if (built.status !== 0) {
      throw new ToolError(['npm run build failed'], EXIT.INTERNAL);
    }
  }
  const file = args['images-file'];
  if (args.check) {
    const built = new Map(selected.map((controller) => [controller, controllerImage(controller).manifest.digest]));
    const { matched, mismatches } = compareWithStamps(file, built);
    for (const line of matched) {
      process.stdout.write(`images --check: ${line}\n`);
    }
    if (mismatches.length > 0) {
      throw new ToolError(mismatches.map((line) => `--check: ${line}`));
    }
    return EXIT.OK;
  }
  const credentials = args.push ? await credentialsFrom({ registry: args.push, username: args.username, 'password-stdin': args['password-stdin'] }) : undefined;
  const images = new Map(selected.map((controller) => [controller, controllerImage(controller)]));
  if (args.push && !args.stamp) {
    // A release pushes exactly the bytes dist/ names: every image is checked before any goes out.
    const { mismatches } = compareWithStamps(file, new Map([...images].map(([controller, image]) => [controller, image.manifest.digest])));
    if (mismatches.length > 0) {
      throw new ToolError(mismatches.map((line) => `--push: ${line}`).concat('--push: nothing pushed (or push with --stamp to publish a new digest)'));
    }
  }
  for (const [controller, image] of images) {
    const dir = join(args.out, controller);
    writeLayout(dir, image);
    let line = `images: ${controller} ${image.manifest.digest} -> ${dir}`;
    if (args.push) {
      const repository = IMAGES[imageKey(controller)].repository.replace(/^[^/]+\//, '');
      const pushed = await pushLayout(dir, { registry: args.push, repository, tag: image.tag, plainHttp: args['plain-http'], credentials });
      line += `; pushed ${pushed.reference}`;
    }
    if (args.stamp) {
      line += stampDigest(file, controller, image.manifest.digest) ? `; stamped into ${file}` : '; already stamped';
    }
    process.stdout.write(`${line}\n`);
  }
  if (args.stamp) {
    process.stdout.write('images: run npm run synth to carry the stamped digests into dist/\n');
  }
  return EXIT.OK;
}

if (isMain(import.meta.url)) {
  runTool('images', main);
}
