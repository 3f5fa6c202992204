/**
 * A reproducible tar.gz writer: ustar entries in path order with parent
 * directories first, fixed modes (0755 / 0644), uid/gid 0, no user or group
 * names, mtime 0; gzip by fflate (pure JavaScript, so the bytes do not depend
 * on the machine's zlib build or CPU) with no file name and mtime 0.
 */
import { gzipSync } from 'fflate';

const BLOCK = 512;

export function tarGz(files: ReadonlyMap<string, string | Uint8Array>): Uint8Array {
  return gzipSync(tar(files), { level: 9, mtime: 0 });
}

export function tar(files: ReadonlyMap<string, string | Uint8Array>): Uint8Array {
  const entries = new Map<string, Uint8Array | null>();
  for (const path of [...files.keys()].sort()) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      entries.set(`${parts.slice(0, i).join('/')}/`, null);
    }
    const content = files.get(path)!;
    entries.set(path, typeof content === 'string' ? Buffer.from(content, 'utf8') : content);
  }
  const chunks: Uint8Array[] = [];
  for (const [path, content] of [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    chunks.push(header(path, content));
    if (content) {
      chunks.push(content, new Uint8Array((BLOCK - (content.length % BLOCK)) % BLOCK));
    }
  }
  chunks.push(new Uint8Array(BLOCK * 2));
  return Buffer.concat(chunks);
}

function header(path: string, content: Uint8Array | null): Uint8Array {
  const block = Buffer.alloc(BLOCK);
  const { name, prefix } = splitName(path);
  block.write(name, 0, 100, 'utf8');
  octal(block, 100, 8, content ? 0o644 : 0o755);
  octal(block, 108, 8, 0); // uid
  octal(block, 116, 8, 0); // gid
  octal(block, 124, 12, content ? content.length : 0);
  octal(block, 136, 12, 0); // mtime
  block.fill(' ', 148, 156); // checksum placeholder
  block.write(content ? '0' : '5', 156, 1, 'ascii');
  block.write('ustar\u000000', 257, 8, 'binary');
  block.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of block) {
    sum += byte;
  }
  block.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'binary');
  return block;
}

/** ustar keeps names up to 100 bytes plus a 155-byte prefix split at a slash. */
function splitName(path: string): { name: string; prefix: string } {
  if (Buffer.byteLength(path) <= 100) {
    return { name: path, prefix: '' };
  }
  for (let i = path.lastIndexOf('/', path.length - 2); i > 0; i = path.lastIndexOf('/', i - 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) {
      return { name, prefix };
    }
  }
  throw new Error(`tar: path too long for ustar: ${path}`);
}

function octal(block: Buffer, offset: number, length: number, value: number): void {
  block.write(`${value.toString(8).padStart(length - 1, '0')}\u0000`, offset, length, 'ascii');
}
