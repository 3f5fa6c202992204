/**
 * What a fresh clone meets through npm, from the project's own npm
 * configuration alone: nothing of this process's environment (which npm
 * itself started) is passed on but PATH and HOME.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTree } from '../../synth/output.js';
import { REPO_ROOT } from '../support/synth.js';

/** npm as a shell runs it: no npm_config_*, NODE_OPTIONS or CDK8S_* inherited from the npm that runs the tests. */
function npm(...args: string[]) {
  const env = { PATH: process.env.PATH!, HOME: process.env.HOME!, npm_config_update_notifier: 'false' };
  return spawnSync('npm', args, { cwd: REPO_ROOT, encoding: 'utf8', env });
}

describe('npm configuration of the project', () => {
  it("npm ci has no install script to warn about: package.json's allowScripts covers every one", () => {
    const pending = npm('approve-scripts', '--allow-scripts-pending', '--offline');
    expect(pending.status, pending.stderr).toBe(0);
    expect(pending.stdout).toContain('No packages with unreviewed install scripts.');
  }, 60_000);

  it('npx cdk8s synth: no upgrade check (so no stack trace offline), and the files npm run synth writes', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'cdk8s-synth-')), 'dist');
    const result = npm('exec', '--', 'cdk8s', 'synth', '--output', out);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/\n\s+at |Error|new version/);
    expect(readdirSync(out)).toContain('SHA256SUMS');
    expect(readTree(out)).toEqual(readTree(join(REPO_ROOT, 'dist')));
  }, 120_000);
});
