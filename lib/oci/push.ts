/**
 * Uploads an OCI image layout to a registry through the distribution API
 * (blob upload, then manifest), then reads it back and checks every digest.
 * A 401 is answered as its challenge asks (lib/oci/registry-auth.ts) and the
 * request sent once more. `synth push` and `npm run images -- --push` both
 * push through it; what the registry or the layout refuses is bad input (exit 2).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../errors.js';
import { digestOf, OCI_MANIFEST_MEDIA_TYPE, type Descriptor } from './layout.js';
import { RegistryAuth, type Credentials } from './registry-auth.js';

export interface PushOptions {
  /** `host:port` of the registry. */
  readonly registry: string;
  /** Repository name, e.g. `cozystack/cozystack/cozystack-packages`. */
  readonly repository: string;
  /** @default the tag the layout's index names */
  readonly tag?: string;
  /** Speak HTTP instead of HTTPS (a registry on loopback). @default false */
  readonly plainHttp?: boolean;
  /** @default anonymous */
  readonly credentials?: Credentials;
}

export interface PushResult {
  readonly reference: string;
  readonly digest: string;
}

export async function pushLayout(layoutDir: string, options: PushOptions): Promise<PushResult> {
  const index = readJson(layoutDir, 'index.json') as { manifests?: (Descriptor & { annotations?: Record<string, string> })[] };
  const descriptor = index.manifests?.[0];
  if (!descriptor || index.manifests!.length !== 1) {
    throw new InputError(`${layoutDir}/index.json: expected exactly one manifest`);
  }
  const tag = options.tag ?? descriptor.annotations?.['org.opencontainers.image.ref.name'];
  if (!tag || !/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag)) {
    throw new InputError(`push: no valid tag (got ${JSON.stringify(tag)}); pass --tag`);
  }
  const manifestBytes = blob(layoutDir, descriptor.digest);
  const manifest = JSON.parse(manifestBytes.toString('utf8')) as { config: Descriptor; layers: Descriptor[] };
  const base = `${options.plainHttp ? 'http' : 'https'}://${options.registry}/v2/${options.repository}`;
  const auth = new RegistryAuth(options.credentials, `repository:${options.repository}:pull,push`);
  const request = (method: string, url: string, body?: Uint8Array, headers: Record<string, string> = {}, expected?: number[]) =>
    send(auth, method, url, body, headers, expected);

  for (const d of [manifest.config, ...manifest.layers]) {
    const bytes = blob(layoutDir, d.digest);
    if ((await request('HEAD', `${base}/blobs/${d.digest}`)).status === 200) {
      continue;
    }
    const start = await request('POST', `${base}/blobs/uploads/`, undefined, {}, [202]);
    const location = new URL(start.headers.get('location') ?? '', `${base}/`);
    location.searchParams.set('digest', d.digest);
    await request('PUT', location.toString(), bytes, { 'content-type': 'application/octet-stream' }, [201]);
  }
  const put = await request('PUT', `${base}/manifests/${tag}`, manifestBytes, { 'content-type': OCI_MANIFEST_MEDIA_TYPE }, [201]);
  const served = put.headers.get('docker-content-digest');
  if (served && served !== descriptor.digest) {
    throw new InputError(`push: registry stored the manifest as ${served}, expected ${descriptor.digest}`);
  }

  // Read back what the registry serves: the same manifest bytes, the same blobs.
  const pulled = await request('GET', `${base}/manifests/${tag}`, undefined, { accept: OCI_MANIFEST_MEDIA_TYPE }, [200]);
  const pulledDigest = digestOf(Buffer.from(await pulled.arrayBuffer()));
  if (pulledDigest !== descriptor.digest) {
    throw new InputError(`push: registry serves ${options.repository}:${tag} as ${pulledDigest}, expected ${descriptor.digest}`);
  }
  for (const d of [manifest.config, ...manifest.layers]) {
    const got = await request('GET', `${base}/blobs/${d.digest}`, undefined, {}, [200]);
    const digest = digestOf(Buffer.from(await got.arrayBuffer()));
    if (digest !== d.digest) {
      throw new InputError(`push: blob ${d.digest} reads back as ${digest}`);
    }
  }
  return { reference: `${options.registry}/${options.repository}:${tag}`, digest: descriptor.digest };
}

async function send(
  auth: RegistryAuth,
  method: string,
  url: string,
  body?: Uint8Array,
  headers: Record<string, string> = {},
  expected?: number[],
): Promise<Response> {
  const once = async () => {
    try {
      return await fetch(url, { method, body, headers: { ...headers, ...auth.header() }, redirect: 'follow' });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new InputError(`push: ${method} ${url}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
    }
  };
  let response = await once();
  if (response.status === 401) {
    await response.body?.cancel();
    await auth.answer(response, `${method} ${url}`);
    response = await once();
    if (response.status === 401) {
      throw new InputError(`push: ${method} ${url}: HTTP 401 again after authenticating: the registry refused ${auth.describe()}`);
    }
  }
  if (expected && !expected.includes(response.status)) {
    const text = (await response.text()).replace(/\s+/g, ' ').slice(0, 300);
    throw new InputError(`push: ${method} ${url}: HTTP ${response.status} ${text}`);
  }
  return response;
}

function readJson(dir: string, file: string): unknown {
  const path = join(dir, file);
  if (!existsSync(path)) {
    throw new InputError(`push: ${path} not found; run npm run synth first`);
  }
  return JSON.parse(readFileSync(path, 'utf8'));
}

function blob(dir: string, digest: string): Buffer {
  const path = join(dir, 'blobs', 'sha256', digest.replace(/^sha256:/, ''));
  if (!existsSync(path)) {
    throw new InputError(`push: ${path} not found`);
  }
  const bytes = readFileSync(path);
  if (digestOf(bytes) !== digest) {
    throw new InputError(`push: ${path} does not match its digest`);
  }
  return bytes;
}
