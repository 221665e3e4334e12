import { discardLogger, type Logger } from '@kubeloop/client';
import { type DestinationStream, type LevelWithSilent, pino } from 'pino';

export { discardLogger, type Logger };

/** Options of {@link newLogger}. */
export interface NewLoggerOptions {
  /** @defaultValue `'info'` */
  readonly level?: LevelWithSilent;
  /** Where JSON lines go. @defaultValue stdout */
  readonly destination?: DestinationStream;
  /** Bound as `name` on every record. */
  readonly name?: string;
}

/**
 * A pino logger writing one JSON object per line (`{"level":30,"time":…,"msg":"…",…}`), with the
 * fields controller-runtime's zap setup would redact (`authorization`, `token`, `password`, `keyData`)
 * censored wherever they appear at the top level or under `config`.
 */
export function newLogger(options: NewLoggerOptions = {}): Logger {
  const opts = {
    level: options.level ?? 'info',
    ...(options.name ? { name: options.name } : {}),
    redact: {
      paths: [
        'authorization',
        'token',
        'bearerToken',
        'password',
        'keyData',
        'config.bearerToken',
        'config.password',
        'config.tlsClientConfig.keyData',
        'headers.authorization',
      ],
      censor: '[redacted]',
    },
  };
  return options.destination ? pino(opts, options.destination) : pino(opts);
}

/** The message of an unknown thrown value, for a log field. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
