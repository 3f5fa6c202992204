/** Flag rules the controllers and the command-line tools (lib/cli.ts) share. */

/**
 * `--switch=junk` for a boolean flag: yargs reads any value but "true" as
 * false, so `--leader-elect=yes` would silently turn election off. Returns the
 * message for the first such argument, or undefined.
 */
export function switchValueProblem(argv: readonly string[], switches: ReadonlySet<string>): string | undefined {
  for (const arg of argv) {
    if (arg === '--') {
      break;
    }
    const match = /^--(?:no-)?([^=]+)=(.*)$/.exec(arg);
    if (match && switches.has(match[1]!) && !['true', 'false'].includes(match[2]!)) {
      return `${arg}: --${match[1]} is a switch; give it alone, or =true / =false`;
    }
  }
  return undefined;
}

/** What yargs 18 has at run time and @types/yargs (17) does not declare. */
export interface YargsInternals {
  getOptions(): { boolean: string[]; array: string[]; key: Record<string, boolean> };
  $0: string;
}
