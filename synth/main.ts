/**
 * `npm run synth`: writes the cozystack-packages artifact into dist/.
 *
 *   npm run synth                     write dist/
 *   npm run synth -- --check          exit 1 with a diff if dist/ is not what synth writes
 *   npm run synth -- --out DIR        write elsewhere
 *   npm run synth -- --set metallb-iad.controller.replicas=2 --values overrides.yaml
 *   npm run synth -- push --registry HOST:PORT --repository NAME [--tag T] [--plain-http]
 *                         [--username U --password-stdin]   (else $DOCKER_CONFIG/config.json)
 *
 * Exit codes: 0 ok, 1 --check found drift, 2 bad input (nothing written), 3 internal error.
 */
import { tmpdir } from 'node:os';
import { hideBin } from 'yargs/helpers';
import { EXIT, InputError, parseArgs, reportError, toolParser } from '../lib/cli.js';
import { join } from 'node:path';
import { artifactDigest, OCI_LAYOUT_DIR, synthesize } from './artifact.js';
import { credentialsFrom, pushFlags } from '../lib/oci/registry-auth.js';
import { pushLayout } from '../lib/oci/push.js';
import { bytesOf } from './file-tree.js';
import { diffTrees, readTree, roundTrip, writeTree } from './output.js';
import { SynthInputError } from './overrides.js';

export async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'push') {
    return push(argv.slice(1));
  }
  const started = performance.now();
  const parser = toolParser('synth', argv, '[--out DIR] [--check] [--values FILE]... [--set K=V[,K=V]]... [--set-string K=V]...  |  synth push --help')
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
    .option('values', { type: 'string', array: true, describe: 'YAML file mapping chart name to value overrides (repeatable)' })
    .option('set', { type: 'string', array: true, describe: "Overrides in helm's --set grammar, CHART.PATH=VALUE (a\\.b, {x,y}, l[0])" })
    .option('set-string', { type: 'string', array: true, describe: 'As --set, every value a string' })
    .option('quiet', { type: 'boolean', default: false, describe: 'Print only the summary line' });
  const args = parseArgs(parser, argv);
  if (!args) {
    return EXIT.OK;
  }

  const files = synthesize({ valuesFiles: args.values, set: args.set, setString: args['set-string'] });
  const digest = artifactDigest(files);
  const elapsed = () => `${Math.round(performance.now() - started)} ms`;

  if (args.check) {
    const committed = readTree(args.out);
    const diff = diffTrees(committed, roundTrip(files, tmpdir()), args.out.replace(/\/+$/, ''));
    if (diff) {
      process.stdout.write(diff);
      process.stderr.write(`synth --check: ${args.out} differs from what synth writes; run npm run synth and commit it\n`);
      return EXIT.CHECK_FAILED;
    }
    process.stdout.write(`synth --check: ${args.out} is up to date (${files.size} files, cozystack-packages ${digest}) in ${elapsed()}\n`);
    return EXIT.OK;
  }

  const written = writeTree(args.out, files);
  if (!args.quiet) {
    for (const [path, content] of files) {
      process.stdout.write(`  ${args.out}/${path} (${bytesOf(content).length} bytes)\n`);
    }
  }
  const what = written ? `${files.size} files to ${args.out}` : `0 files to ${args.out}: its ${files.size} files already hold this output`;
  process.stdout.write(`synth: wrote ${what} (cozystack-packages ${digest}) in ${elapsed()}\n`);
  return EXIT.OK;
}

/** `synth push`: uploads the OCI layout synth wrote to a registry and verifies it. */
async function push(argv: string[]): Promise<number> {
  const parser = pushFlags(toolParser('synth push', argv, '--registry HOST[:PORT] [--repository NAME] [--tag T] [--layout DIR] [--plain-http] [auth flags]'))
    .option('repository', { type: 'string', default: 'cozystack/cozystack/cozystack-packages', describe: 'Repository' })
    .option('tag', { type: 'string', describe: 'Tag (default: the version the layout names)' })
    .option('layout', { type: 'string', default: join('dist', OCI_LAYOUT_DIR), describe: 'OCI image layout to push' });
  const args = parseArgs(parser, argv);
  if (!args) {
    return EXIT.OK;
  }
  const result = await pushLayout(args.layout, {
    registry: args.registry,
    repository: args.repository,
    tag: args.tag,
    plainHttp: args['plain-http'],
    credentials: await credentialsFrom(args),
  });
  process.stdout.write(`synth push: ${result.reference} is ${result.digest} (read back and verified)\n`);
  return EXIT.OK;
}

/** Exit codes: lib/errors.ts (0 ok, 1 drift, 2 bad input, 3 internal). */
main(hideBin(process.argv)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.exitCode = reportError('synth', error instanceof SynthInputError ? new InputError(error.message.split('\n')[0]!) : error);
  },
);
