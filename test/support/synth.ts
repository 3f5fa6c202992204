/** Synthesizes the artifact into a temp folder for tests that need files on disk. */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { synthesize } from '../../synth/artifact.js';
import { writeFiles } from '../../synth/output.js';

let cached: string | undefined;

/** A folder holding a fresh synth of the artifact, shared by the tests of one file. */
export function synthesizedArtifact(): string {
  if (!cached) {
    cached = mkdtempSync(join(tmpdir(), 'cozy-addresses-test-'));
    writeFiles(cached, synthesize());
  }
  return cached;
}

/** A package of the synthesized artifact's packages/system/ (a Cozystack wrapper chart). */
export function systemPackageDir(name: string): string {
  return join(synthesizedArtifact(), 'packages', 'system', name);
}

export const REPO_ROOT = join(import.meta.dirname, '..', '..');

/** Every .ts file under `dir`, for tests that read the source tree. */
export function typeScriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? typeScriptFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}
