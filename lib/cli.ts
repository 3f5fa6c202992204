/**
 * The command-line layer every tool here shares (synth and the hack/ tools):
 * strict yargs, `--help`/`-h`, `--version`, flags that need a value refuse to
 * go without one, switches refuse junk values, and one exit-code convention
 * (lib/errors.ts, exported here too: a tool takes its parser and its errors
 * from one place).
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import yargs, { type Argv } from 'yargs';
import { EXIT, InputError, ToolError, type ExitCode } from './errors.js';
import { switchValueProblem, type YargsInternals } from './flags.js';
import { VERSION } from './version.js';

export { EXIT, InputError, ToolError, type ExitCode };

/** File-system errors a user causes (a wrong path) rather than a bug. */
const USER_ERRNO = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'EACCES', 'EPERM', 'EEXIST', 'ENOTEMPTY', 'EROFS']);

/** True when `moduleUrl` is the script node was started with. */
export function isMain(moduleUrl: string): boolean {
  return Boolean(process.argv[1]) && resolve(process.argv[1]!) === fileURLToPath(moduleUrl);
}

/**
 * A yargs parser with the shared conventions. Define options on it, then
 * call `parseArgs`. `usage` is the first help line after the name.
 */
export function toolParser(name: string, argv: readonly string[], usage: string): Argv {
  return yargs([...argv])
    .scriptName(name)
    .usage(`${name} ${usage}`)
    .strictOptions()
    .help('help')
    .alias('help', 'h')
    .version('version', 'Print the version and exit', VERSION)
    .wrap(100)
    .exitProcess(false)
    .parserConfiguration({ 'duplicate-arguments-array': true })
    .fail((message, error) => {
      throw error instanceof ToolError ? error : new InputError(`${message ?? error?.message ?? 'invalid arguments'} (see ${name} --help)`);
    });
}

/**
 * Parses with `parser`; undefined when --help or --version was answered.
 * Before yargs sees it, `--switch=junk` is refused (yargs would read it as false)
 * and every non-switch option is made to need a value.
 */
export function parseArgs<T>(
  parser: Argv<T>,
  argv: readonly string[],
  { positionals = 0 }: { positionals?: number } = {},
): (T & { _: string[] }) | undefined {
  const internals = parser as unknown as YargsInternals;
  const options = internals.getOptions();
  const switches = new Set(options.boolean);
  const problem = switchValueProblem(argv, switches);
  if (problem) {
    throw new InputError(problem);
  }
  const valued = Object.keys(options.key).filter((key) => !switches.has(key));
  if (valued.length > 0) {
    parser.requiresArg(valued);
  }
  const args = parser.parseSync() as T & { _: (string | number)[]; help?: boolean; version?: boolean };
  if (args.help || args.version) {
    return undefined;
  }
  // A single-valued flag given twice: the last wins, as in helm and kubectl.
  const lists = new Set(options.array);
  for (const key of Object.keys(options.key)) {
    const value = (args as Record<string, unknown>)[key];
    if (!lists.has(key) && Array.isArray(value)) {
      (args as Record<string, unknown>)[key] = value.at(-1);
    }
  }
  const rest = args._.map(String);
  if (rest.length > positionals) {
    const name = internals.$0 || 'this tool';
    throw new InputError(
      positionals === 0
        ? `unexpected argument ${JSON.stringify(rest[0])} (see ${name} --help)`
        : `at most ${positionals} argument${positionals === 1 ? '' : 's'} (got ${rest.map((r) => JSON.stringify(r)).join(' ')}; see ${name} --help)`,
    );
  }
  return { ...args, _: rest };
}

/** parseArgs for a script's top level: bad flags print one line and exit 2; --help and --version exit 0. */
export function parseArgsOrExit<T>(name: string, parser: Argv<T>, argv: readonly string[]): T & { _: string[] } {
  let args: (T & { _: string[] }) | undefined;
  try {
    args = parseArgs(parser, argv);
  } catch (error) {
    process.exit(reportError(name, error));
  }
  if (!args) {
    process.exit(EXIT.OK);
  }
  return args;
}

/** Prints an error as the convention says and returns its exit code. */
export function reportError(name: string, error: unknown, write: (line: string) => void = (l) => process.stderr.write(l)): ExitCode {
  if (error instanceof ToolError) {
    for (const line of error.lines) {
      write(`${name}: ${line}\n`);
    }
    return error.exitCode;
  }
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code && USER_ERRNO.has(code)) {
    write(`${name}: ${(error as Error).message}\n`);
    return EXIT.BAD_INPUT;
  }
  write(`${name}: internal error: ${(error as Error)?.stack ?? String(error)}\n`);
  return EXIT.INTERNAL;
}

/**
 * Runs a tool's main. It returns its stdout text (exit 0) or an exit code,
 * or throws: a ToolError prints its lines and exits with its code.
 */
export function runTool(name: string, main: (argv: string[]) => string | number | Promise<string | number>): void {
  Promise.resolve()
    .then(() => main(process.argv.slice(2)))
    .then(
      (result) => {
        if (typeof result === 'string') {
          process.stdout.write(result);
          process.exitCode = EXIT.OK;
        } else {
          process.exitCode = result;
        }
      },
      (error: unknown) => {
        process.exitCode = reportError(name, error);
      },
    );
}
