/**
 * `npm run bench`: speed and memory of synthesis, measured in-process (no
 * timing assertions live in tests). Prints one line per measurement.
 */
import { performance } from 'node:perf_hooks';
import { synthesize } from '../synth/artifact.js';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const runs = Number(process.env.BENCH_RUNS ?? 30);
synthesize(); // warm-up: module loading and JIT
const times: number[] = [];
let peakHeap = 0;
for (let i = 0; i < runs; i++) {
  const started = performance.now();
  const files = synthesize();
  times.push(performance.now() - started);
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  if (files.size === 0) {
    throw new Error('synthesize produced nothing');
  }
}
times.sort((a, b) => a - b);
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
process.stdout.write(
  `bench synth: ${runs} runs, min ${fmt(times[0]!)}, median ${fmt(percentile(times, 50))}, ` +
    `p95 ${fmt(percentile(times, 95))}, peak heap ${(peakHeap / 2 ** 20).toFixed(1)} MiB\n`,
);
