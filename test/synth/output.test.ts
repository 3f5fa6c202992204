import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECKSUMS_FILE, type FileTree } from '../../synth/artifact.js';
import { holdsExactly, writeTree } from '../../synth/output.js';
import { mergeGraphs } from '../../constructs/platform/source-graph.js';

const files: FileTree = new Map<string, string | Uint8Array>([
  ['a/b/c.yaml', 'c: 1\n'],
  ['a/d.bin', new Uint8Array([0, 255, 1])],
  [CHECKSUMS_FILE, 'sums\n'],
]);

describe('writeTree', () => {
  it('writes a tree, then leaves one that already holds exactly those files alone', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'write-tree-')), 'dist');
    expect(writeTree(out, files)).toBe(true);
    expect(holdsExactly(out, files)).toBe(true);
    const mtime = statSync(join(out, 'a', 'b', 'c.yaml')).mtimeMs;
    expect(writeTree(out, files)).toBe(false);
    expect(statSync(join(out, 'a', 'b', 'c.yaml')).mtimeMs).toBe(mtime);
  });

  it.each([
    ['a changed byte', (out: string) => writeFileSync(join(out, 'a', 'b', 'c.yaml'), 'c: 2\n')],
    ['an extra file', (out: string) => writeFileSync(join(out, 'a', 'stray'), '')],
    ['an extra folder', (out: string) => mkdirSync(join(out, 'a', 'empty'))],
    ['a missing file', (out: string) => rmSync(join(out, 'a', 'd.bin'))],
    ['a file not 0644', (out: string) => chmodSync(join(out, 'a', 'd.bin'), 0o600)],
    ['a folder not 0755', (out: string) => chmodSync(join(out, 'a', 'b'), 0o700)],
    ['a symlink in place of a file', (out: string) => (rmSync(join(out, 'a', 'd.bin')), symlinkSync('b/c.yaml', join(out, 'a', 'd.bin')))],
  ])('rewrites the whole tree after %s', (_, change) => {
    const out = join(mkdtempSync(join(tmpdir(), 'write-tree-')), 'dist');
    writeTree(out, files);
    change(out);
    expect(holdsExactly(out, files)).toBe(false);
    expect(writeTree(out, files)).toBe(true);
    expect(holdsExactly(out, files)).toBe(true);
  });

  it('a missing folder holds nothing', () => {
    expect(holdsExactly(join(tmpdir(), 'cozy-addresses-no-such-folder'), files)).toBe(false);
  });
});

describe('mergeGraphs', () => {
  it('orders sources by code unit, the same under every locale', () => {
    const merged = mergeGraphs([new Map([['cozystack.z', []], ['cozystack.a-b', []], ['cozystack.Z', []]]), new Map([['cozystack.a.b', ['x']]])]);
    expect([...merged.keys()]).toEqual(['cozystack.Z', 'cozystack.a-b', 'cozystack.a.b', 'cozystack.z']);
  });
});
