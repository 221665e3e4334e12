/**
 * CacheLogger knows how to write structured log records. pino loggers fit it as they are; the default
 * discards everything. Never pass secrets in `fields`.
 */
export interface CacheLogger {
  debug(fields: Record<string, unknown>, msg: string): void;
  info(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
  error(fields: Record<string, unknown>, msg: string): void;
}

const noop = (): void => {};

/** A logger that drops every record. */
export const discardLogger: CacheLogger = Object.freeze({ debug: noop, info: noop, warn: noop, error: noop });
