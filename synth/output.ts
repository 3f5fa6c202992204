/** Writing the artifact tree to disk atomically, reading it back, and diffing two trees. */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { CHECKSUMS_FILE } from './artifact.js';
import { bytesOf, canonical, sameContent, type FileTree } from './file-tree.js';
import { SynthInputError } from './overrides.js';

/**
 * Replaces `out` with exactly `files`: written to a sibling temp folder first
 * and renamed into place, so a failure leaves the previous output untouched.
 * When `out` already holds exactly these files (paths, bytes, modes), nothing
 * is written and false is returned: replacing a tree costs a folder's worth of
 * creates and deletes, far more than reading it, and an unchanged tree keeps
 * its mtimes.
 */
export function writeTree(out: string, files: FileTree): boolean {
  const target = resolve(out);
  guardTarget(out, target);
  if (holdsExactly(target, files)) {
    return false;
  }
  const parent = dirname(target);
  let staging: string | undefined;
  try {
    mkdirSync(parent, { recursive: true });
    staging = mkdtempSync(join(parent, `.${basename(target)}.tmp-`));
    // mkdtemp makes 0700; the artifact is 0755 folders and 0644 files whatever the umask.
    chmodSync(staging, 0o755);
    writeFiles(staging, files);
    if (existsSync(target)) {
      const old = `${staging}.old`;
      renameSync(target, old);
      renameSync(staging, target);
      rmSync(old, { recursive: true, force: true });
    } else {
      renameSync(staging, target);
    }
    staging = undefined;
    return true;
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    throw new SynthInputError(`--out ${out}: cannot write: ${e.message.replace(/\s+/g, ' ')}`);
  } finally {
    if (staging) {
      rmSync(staging, { recursive: true, force: true });
    }
  }
}

/** Writes `files` under `dir`, which must exist: folders 0755, files 0644. */
export function writeFiles(dir: string, files: FileTree): void {
  const made = new Set<string>();
  for (const [path, content] of files) {
    const file = join(dir, ...path.split('/'));
    const folder = dirname(file);
    if (!made.has(folder)) {
      const first = mkdirSync(folder, { recursive: true });
      // mkdirSync returns the first folder it made; chmod each one made, umask or not.
      for (let at = folder; first && at.length >= first.length; at = dirname(at)) {
        chmodSync(at, 0o755);
      }
      made.add(folder);
    }
    writeFileSync(file, bytesOf(content), { mode: 0o644 });
    chmodSync(file, 0o644);
  }
}

/** True when `dir` holds `files` and nothing else: the same bytes, files 0644, folders 0755 (as writeFiles leaves them). */
export function holdsExactly(dir: string, files: FileTree): boolean {
  const folders = new Set([...files.keys()].flatMap((path) => path.split('/').slice(0, -1).map((_, i, parts) => `${parts.slice(0, i + 1).join('/')}/`)));
  let seen = 0;
  const same = (current: string, prefix: string): boolean => {
    if ((statSync(current).mode & 0o7777) !== 0o755) {
      return false;
    }
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const full = join(current, entry.name);
      const path = `${prefix}${entry.name}`;
      if (entry.isDirectory()) {
        if (!folders.has(`${path}/`) || !same(full, `${path}/`)) {
          return false;
        }
        continue;
      }
      const content = files.get(path);
      if (!entry.isFile() || content === undefined || (statSync(full).mode & 0o7777) !== 0o644 || !readFileSync(full).equals(bytesOf(content))) {
        return false;
      }
      seen++;
    }
    return true;
  };
  try {
    return same(dir, '') && seen === files.size;
  } catch {
    return false; // missing or unreadable: write it
  }
}

/** Never replace a folder synth did not write (say `--out .`): it would be deleted. */
function guardTarget(out: string, target: string): void {
  if (!existsSync(target)) {
    return;
  }
  if (!statSync(target).isDirectory()) {
    throw new SynthInputError(`--out ${out}: exists and is not a directory`);
  }
  if (readdirSync(target).length > 0 && !existsSync(join(target, CHECKSUMS_FILE))) {
    throw new SynthInputError(
      `--out ${out}: exists, is not empty and holds no ${CHECKSUMS_FILE}, so it is not a synth output; refusing to replace it`,
    );
  }
}

/** Every file under `dir`, keyed by `/`-separated relative path; empty when `dir` is missing. */
export function readTree(dir: string): FileTree {
  const files: FileTree = new Map();
  if (!existsSync(dir)) {
    return files;
  }
  if (!statSync(dir).isDirectory()) {
    throw new SynthInputError(`--out ${dir}: exists and is not a directory`);
  }
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = join(current, entry.name);
      if (entry.isDirectory()) {
        walk(full);
      } else {
        files.set(relative(dir, full).split(sep).join('/'), canonical(readFileSync(full)));
      }
    }
  };
  walk(dir);
  return files;
}

/** Unified diff from `before` to `after`, labelled under `label`; empty when identical. */
export function diffTrees(before: FileTree, after: FileTree, label: string): string {
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort();
  const patches: string[] = [];
  for (const path of paths) {
    const a = before.get(path);
    const b = after.get(path);
    if (sameContent(a, b)) {
      continue;
    }
    const from = a === undefined ? '/dev/null' : `a/${label}/${path}`;
    const to = b === undefined ? '/dev/null' : `b/${label}/${path}`;
    if (typeof a === 'object' || typeof b === 'object') {
      patches.push(`Binary files ${from} and ${to} differ\n`);
      continue;
    }
    patches.push(createTwoFilesPatch(from, to, a ?? '', b ?? '', undefined, undefined, { context: 3 }));
  }
  return patches.join('');
}

/** Synthesizes into a fresh temp folder (as a real run would) and reads it back. */
export function roundTrip(files: FileTree, tmpRoot: string): FileTree {
  const dir = mkdtempSync(join(tmpRoot, 'cozy-addresses-check-'));
  try {
    writeFiles(dir, files);
    return readTree(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
