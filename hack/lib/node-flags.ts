/**
 * The flags node runs the controllers' bundles with: in the image's
 * ENTRYPOINT (the Dockerfiles, checked by test/controllers/dockerfiles.test.ts)
 * and in the end-to-end harness and benches, so what is measured is what ships.
 *
 * --max-semi-space-size=1: V8's young generation otherwise grows to 16 MiB per
 * semi-space (three of them) under a burst of watch events; at 1 MiB the
 * controllers' peak RSS at 1,000 claims drops by about 20 MiB (npm run bench)
 * for a few more scavenges, which the bind rate does not show.
 */
export const RUNTIME_NODE_FLAGS = ['--enable-source-maps', '--max-semi-space-size=1'] as const;
