/** The artifact as an in-memory file tree, and the one canonical form of file content. */
import { createHash } from 'node:crypto';

/** Path (relative, `/`-separated) to content: text as string, anything not UTF-8 as bytes. */
export type FileTree = Map<string, string | Uint8Array>;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Text when the bytes are valid UTF-8, the bytes otherwise; so a tree read back compares equal. */
export function canonical(bytes: Uint8Array): string | Uint8Array {
  try {
    return utf8.decode(bytes);
  } catch {
    return bytes;
  }
}

export function bytesOf(content: string | Uint8Array): Uint8Array {
  return typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
}

export function sameContent(a: string | Uint8Array | undefined, b: string | Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined) {
    return a === b;
  }
  return Buffer.from(bytesOf(a)).equals(Buffer.from(bytesOf(b)));
}

export function sha256Hex(content: string | Uint8Array): string {
  return createHash('sha256').update(bytesOf(content)).digest('hex');
}
