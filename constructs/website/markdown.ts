/**
 * The website's pages as the Cozystack website writes them (Hugo, Docsy):
 * front matter, then Markdown. Code blocks are typed by what the guides' test
 * (test/e2e/guides.test.ts) does with them, so a page's examples are run, not
 * trusted:
 *
 *   sh    run with bash, as the page's reader (`set -euo pipefail`)
 *   yaml  applied with `kubectl apply -f -`, as the page's reader
 *   text  shown only (an output, a values file)
 */
export type BlockKind = 'sh' | 'yaml' | 'text';

export interface FrontMatter {
  readonly title: string;
  readonly linkTitle: string;
  readonly description: string;
  readonly weight: number;
}

/** A fenced block: its lines, joined. */
export function block(kind: BlockKind, lines: readonly string[]): string {
  return ['```' + kind, ...lines, '```'].join('\n');
}

/** A page: front matter and its parts, a blank line between them. */
export function page(front: FrontMatter, parts: readonly string[]): string {
  const yaml = [
    '---',
    `title: ${JSON.stringify(front.title)}`,
    `linkTitle: ${JSON.stringify(front.linkTitle)}`,
    `description: ${JSON.stringify(front.description)}`,
    `weight: ${front.weight}`,
    '---',
  ].join('\n');
  return `${[yaml, ...parts].join('\n\n')}\n`;
}

/** The blocks of a page, in order, with their kinds (what the guides' test runs). */
export function blocksOf(markdown: string): { kind: string; body: string }[] {
  const out: { kind: string; body: string }[] = [];
  const fence = /^```(\S*)\n([\s\S]*?)^```$/gm;
  for (const m of markdown.matchAll(fence)) {
    out.push({ kind: m[1]!, body: m[2]! });
  }
  return out;
}
