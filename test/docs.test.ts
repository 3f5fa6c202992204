/** Comments and tests cite the design in docs/, which is in the repository, and nothing outside it. */
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, typeScriptFiles } from './support/synth.js';

const files = ['api', 'constructs', 'controllers', 'synth', 'hack', 'test'].flatMap((d) => typeScriptFiles(join(REPO_ROOT, d)));

describe('design references', () => {
  it('every docs/*.md a source cites exists', () => {
    const cited = new Set(files.flatMap((f) => readFileSync(f, 'utf8').match(/docs\/[a-z-]+\.md/g) ?? []));
    expect(cited.size).toBeGreaterThanOrEqual(4);
    expect([...cited].filter((doc) => !existsSync(join(REPO_ROOT, doc)))).toEqual([]);
  });

  it('no source cites a research note outside the repository, or its section numbers', () => {
    const outside = /\b(address-controller-api|metallb-iad|anchors|cozystack-packaging)\.md\b|§(?!\d+\.\d+\.\d+\.\d+)/;
    const offenders = files
      .filter((f) => !f.endsWith('docs.test.ts'))
      .flatMap((f) => readFileSync(f, 'utf8').split('\n').map((line, i) => [f, i + 1, line] as const))
      .filter(([, , line]) => outside.test(line) && !/RFC \d+/.test(line))
      .map(([f, n]) => `${relative(REPO_ROOT, f)}:${n}`);
    expect(offenders).toEqual([]);
  });
});
