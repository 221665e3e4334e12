/**
 * Logger knows how to write structured log records and derive child loggers with bound fields — the one
 * logging shape of the kubeloop stack (the client, the cache and the builder all accept it; controller-runtime
 * uses a `logr.Logger` the same way). A pino logger fits it as it is. Records are `(fields, msg)`; never put
 * a token, key or password in `fields`.
 */
export interface Logger {
  debug(fields: Record<string, unknown>, msg: string): void;
  info(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
  error(fields: Record<string, unknown>, msg: string): void;
  /** A logger that adds `bindings` to every record it writes. */
  child(bindings: Record<string, unknown>): Logger;
}

const noop = (): void => {};

/** A {@link Logger} that drops every record (logr's `Discard()`); its children drop them too. */
export const discardLogger: Logger = Object.freeze({
  debug: noop,
  info: noop,
  warn: noop,
  error: noop,
  child: (): Logger => discardLogger,
});
