/**
 * `npm run synth`: writes the cozystack-packages artifact into dist/.
 *
 *   npm run synth                     write dist/
 *   npm run synth -- --check          exit 1 with a diff if dist/ is not what synth writes
 *   npm run synth -- --out DIR        write elsewhere
 *   npm run synth -- --set metallb-iad.controller.replicas=2 --values overrides.yaml
 *   npm run synth -- push --registry HOST:PORT --repository NAME [--tag T] [--plain-http]
 */
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { join } from 'node:path';
import { artifactDigest, OCI_LAYOUT_DIR, synthesize } from './artifact.js';
import { pushLayout } from './push.js';
import { bytesOf } from './file-tree.js';
import { diffTrees, readTree, roundTrip, writeTree } from './output.js';
import { SynthInputError } from './overrides.js';

export async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'push') {
    return push(argv.slice(1));
  }
  const started = performance.now();
  const parser = yargs(argv)
    .scriptName('synth')
    .usage('$0 [--out DIR] [--check] [--values FILE]... [--set CHART.PATH=VALUE]...')
    .option('out', {
      type: 'string',
      default: process.env.CDK8S_OUTDIR || 'dist',
      describe: 'Folder to write (replaced whole)',
    })
    .option('check', {
      type: 'boolean',
      default: false,
      describe: 'Write nothing; diff the synthesized tree against --out and exit 1 on drift',
    })
    .option('values', { type: 'string', array: true, describe: 'YAML file mapping chart name to value overrides' })
    .option('set', { type: 'string', array: true, describe: 'One value override, CHART.PATH=VALUE' })
    .option('quiet', { type: 'boolean', default: false, describe: 'Print only the summary line' });
  const args = await strictly(parser).parseAsync();
  if (args.help) {
    return 0;
  }

  const files = synthesize({ valuesFiles: args.values, set: args.set });
  const digest = artifactDigest(files);
  const elapsed = () => `${Math.round(performance.now() - started)} ms`;

  if (args.check) {
    const committed = readTree(args.out);
    const diff = diffTrees(committed, roundTrip(files, tmpdir()), args.out.replace(/\/+$/, ''));
    if (diff) {
      process.stdout.write(diff);
      process.stderr.write(`synth --check: ${args.out} differs from what synth writes; run npm run synth and commit it\n`);
      return 1;
    }
    process.stdout.write(`synth --check: ${args.out} is up to date (${files.size} files, cozystack-packages ${digest}) in ${elapsed()}\n`);
    return 0;
  }

  writeTree(args.out, files);
  if (!args.quiet) {
    for (const [path, content] of files) {
      process.stdout.write(`  ${args.out}/${path} (${bytesOf(content).length} bytes)\n`);
    }
  }
  process.stdout.write(`synth: wrote ${files.size} files to ${args.out} (cozystack-packages ${digest}) in ${elapsed()}\n`);
  return 0;
}

/** Unknown flags and bad values become one-line SynthInputErrors instead of yargs' own exit. */
function strictly<T>(parser: Argv<T>): Argv<T> {
  return parser
    .strict()
    .help()
    .version(false)
    .exitProcess(false)
    .fail((message, error) => {
      throw new SynthInputError(message ?? error?.message ?? 'invalid arguments');
    });
}

/** `synth push`: uploads the OCI layout synth wrote to a registry and verifies it. */
async function push(argv: string[]): Promise<number> {
  const parser = yargs(argv)
    .scriptName('synth push')
    .option('registry', { type: 'string', demandOption: true, describe: 'Registry host:port' })
    .option('repository', { type: 'string', default: 'cozystack/cozystack/cozystack-packages', describe: 'Repository' })
    .option('tag', { type: 'string', describe: 'Tag (default: the version the layout names)' })
    .option('layout', { type: 'string', default: join('dist', OCI_LAYOUT_DIR), describe: 'OCI image layout to push' })
    .option('plain-http', { type: 'boolean', default: false, describe: 'HTTP instead of HTTPS (a loopback registry)' });
  const args = await strictly(parser).parseAsync();
  if (args.help) {
    return 0;
  }
  const result = await pushLayout(args.layout, {
    registry: args.registry,
    repository: args.repository,
    tag: args.tag,
    plainHttp: args['plain-http'],
  });
  process.stdout.write(`synth push: ${result.reference} is ${result.digest} (read back and verified)\n`);
  return 0;
}

main(hideBin(process.argv)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof SynthInputError) {
      process.stderr.write(`synth: ${error.message.split('\n')[0]}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`synth: internal error: ${(error as Error).stack ?? error}\n`);
      process.exitCode = 3;
    }
  },
);
