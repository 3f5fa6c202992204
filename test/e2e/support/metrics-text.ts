/** Reading Prometheus' text format as the controllers serve it. */

/** One metric's samples, by their label text ('' for a sample without labels). */
export function samplesOf(text: string, metric: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = line.match(/^([a-z_]+)(\{[^}]*\})? (\S+)$/);
    if (match && match[1] === metric) {
      samples.set(match[2] ?? '', Number(match[3]));
    }
  }
  return samples;
}
