import { discardLogger, type Logger } from '@kubeloop/core';
import { type DestinationStream, type LevelWithSilent, pino, stdSerializers } from 'pino';

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
    serializers: { err: serializeError },
  };
  return options.destination ? pino(opts, options.destination) : pino(opts);
}

/**
 * pino's error serializer, with two changes:
 * - the message names each link of the cause chain once: pino appends every cause's message to the error's
 *   (`outer: cause`), but our errors already say their cause (a `TransportError` is `GET host/path: connect
 *   ECONNREFUSED …`, an `InformerSyncError` quotes the transport error), so the log read
 *   `…: connect ECONNREFUSED X: connect ECONNREFUSED X`. A cause whose message the text so far already contains
 *   is skipped; any other is appended as pino does (the stack still lists every cause);
 * - a plain object property of the error (a `StatusError`'s `status`, the API server's `Status`) is logged as
 *   it is: pino treats every object with a `message` as an error and wrote the Status with a bogus
 *   `type: "Object"` and an empty `stack`.
 */
function serializeError(err: unknown): unknown {
  const out: unknown = stdSerializers.err(err as Error);
  if (out === null || typeof out !== 'object' || err === null || typeof err !== 'object') return out;
  if (typeof (err as { message?: unknown }).message === 'string')
    (out as { message: string }).message = messageWithNewCauses(err as Error);
  for (const [key, value] of Object.entries(err)) {
    if (key !== 'cause' && value !== null && typeof value === 'object' && !(value instanceof Error))
      (out as Record<string, unknown>)[key] = value;
  }
  return out;
}

/** `err.message`, then each message of its `cause` chain that the text so far does not already contain. */
function messageWithNewCauses(err: Error): string {
  let text = err.message;
  const seen = new Set<unknown>([err]);
  for (let c = err.cause; c instanceof Error && !seen.has(c); c = c.cause) {
    seen.add(c);
    if (c.message && !text.includes(c.message)) text = text ? `${text}: ${c.message}` : c.message;
  }
  return text;
}

/** The message of an unknown thrown value, for a log field. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
