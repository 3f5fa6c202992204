/**
 * The flags node runs the controllers' bundles with: in the image's
 * ENTRYPOINT (controllers/Dockerfile, checked by test/controllers/dockerfiles.test.ts)
 * and in the end-to-end harness and benches, so what is measured is what ships.
 *
 * --max-semi-space-size=1: V8's young generation otherwise grows to 16 MiB per
 * semi-space (three of them) under a burst of watch events; at 1 MiB the
 * controllers' peak RSS at 1,000 claims drops by about 20 MiB (npm run bench)
 * for a few more scavenges, which the bind rate does not show.
 *
 * --optimize-for-size: V8 grows its old generation less eagerly and favours small code; at 1,000
 * claims end to end the driver's peak RSS went from 142 to 104 MiB and the core's from 113 to
 * 95 MiB (npm run bench:e2e; a heap snapshot found 30 MiB live in the driver at 121 MiB RSS: the
 * rest was room V8 had grown into).
 *
 * No --enable-source-maps: the first stack trace formatted with it parses the
 * 3.8 MB map and keeps it, about 60 MiB of RSS (the driver, idle, retrying an
 * unreachable apiserver: 135 MiB with it, 76 MiB without). The map still ships
 * next to the bundle: `NODE_OPTIONS=--enable-source-maps` when debugging.
 */
export const RUNTIME_NODE_FLAGS = ['--max-semi-space-size=1', '--optimize-for-size'] as const;

/**
 * Node flags from an environment variable (space-separated), or undefined when it is unset: an
 * empty value means no flags, which is not the same as none given.
 */
export function nodeFlagsFrom(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(/\s+/).filter(Boolean);
}
