/** Structured JSON logs, one object a line on stderr. */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  with(fields: Record<string, unknown>): Logger;
}

export function createLogger(
  level: LogLevel = 'info',
  base: Record<string, unknown> = {},
  write: (line: string) => void = (line) => process.stderr.write(line),
): Logger {
  const emit = (at: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[at] < ORDER[level]) {
      return;
    }
    const entry: Record<string, unknown> = { ts: new Date().toISOString(), level: at, msg, ...base, ...fields };
    if (entry.error instanceof Error) {
      entry.error = entry.error.message;
    }
    write(JSON.stringify(entry) + '\n');
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    with: (fields) => createLogger(level, { ...base, ...fields }, write),
  };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = createLogger('error', {}, () => undefined);
