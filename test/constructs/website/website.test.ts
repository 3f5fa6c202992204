/** The website's files as the website writes its own (constructs/website/website.ts). */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { blocksOf } from '../../../constructs/website/markdown.js';
import { GUIDE_PAGES, websiteFiles } from '../../../constructs/website/website.js';
import { synthesize } from '../../../synth/artifact.js';

const files = websiteFiles();

describe('the website’s files', () => {
  it.each(Object.values(GUIDE_PAGES))('%s has the website’s front matter (title, linkTitle, description, weight) and runnable blocks only of known kinds', (path) => {
    const text = files.get(path)!;
    const [, front] = text.split('---\n');
    expect(Object.keys(parse(front!) as object)).toEqual(['title', 'linkTitle', 'description', 'weight']);
    const kinds = blocksOf(text).map((b) => b.kind);
    expect(kinds.length).toBeGreaterThan(5);
    expect(kinds.filter((k) => !['sh', 'yaml', 'text'].includes(k))).toEqual([]);
  });

  it('cards and licence rows are one oss-card shortcode line per component, with the required name, license and source', () => {
    for (const path of ['website/fragments/platform-stack-networking.md', 'website/fragments/licenses-networking.md']) {
      const lines = files.get(path)!.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^<!-- .* Paste into content\/en\/docs\/next\/.*\.md, at the end of the "## Networking" section/);
      expect(lines.slice(1)).toHaveLength(2);
      for (const line of lines.slice(1)) {
        expect(line).toMatch(/^\{\{< oss-card name="[^"]+" license="Apache-2\.0" source="https:\/\/github\.com\/cozystack\/[a-z-]+\/blob\/main\/LICENSE" description="[^"]+" >\}\}$/);
      }
    }
  });

  it('lands under dist/website/, outside the OCI artifact', () => {
    const tree = synthesize();
    for (const path of files.keys()) {
      expect(tree.get(path)).toBe(files.get(path));
    }
    expect([...tree.keys()].filter((p) => p.startsWith('packages/') && p.includes('website'))).toEqual([]);
  });
});
