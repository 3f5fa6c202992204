/** Shared bits of the hack/ command-line tools. */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A failure to report on stderr with exit code 1, without a stack trace. */
export class ToolError extends Error {
  constructor(readonly lines: readonly string[]) {
    super(lines.join('\n'));
  }
}

/** True when `moduleUrl` is the script node was started with. */
export function isMain(moduleUrl: string): boolean {
  return Boolean(process.argv[1]) && resolve(process.argv[1]!) === fileURLToPath(moduleUrl);
}

/** Runs a tool's main, printing ToolErrors as lines on stderr. */
export function runTool(name: string, main: (argv: string[]) => string): void {
  try {
    process.stdout.write(main(process.argv.slice(2)));
  } catch (error) {
    if (error instanceof ToolError) {
      for (const line of error.lines) {
        process.stderr.write(`${name}: ${line}\n`);
      }
    } else {
      process.stderr.write(`${name}: ${(error as Error).stack ?? error}\n`);
    }
    process.exitCode = 1;
  }
}
