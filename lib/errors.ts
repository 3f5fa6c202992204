/**
 * The exit-code convention of every tool here (synth and the hack/ tools), and
 * the errors that carry one. Apart from the command-line parser (lib/cli.ts)
 * so that code that only throws them (the OCI client, synth's assembly) loads
 * no yargs.
 *
 *   0  ok
 *   1  a check failed (drift, a refused image ref, a dangling dependency)
 *   2  bad input (a flag, a file, a value, a registry's refusal); nothing was written
 *   3  internal error (a bug: the only case that prints a stack trace)
 */
export const EXIT = { OK: 0, CHECK_FAILED: 1, BAD_INPUT: 2, INTERNAL: 3 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure to report as lines on stderr, without a stack trace. A failed check unless told otherwise. */
export class ToolError extends Error {
  constructor(
    readonly lines: readonly string[],
    readonly exitCode: ExitCode = EXIT.CHECK_FAILED,
  ) {
    super(lines.join('\n'));
  }
}

/** Bad input: exit 2. */
export class InputError extends ToolError {
  constructor(lines: readonly string[] | string) {
    super(typeof lines === 'string' ? [lines] : lines, EXIT.BAD_INPUT);
  }
}
