import { type Logger, newLogger } from '@kubeloop/builder';
import pretty from 'pino-pretty';
import type { LogLevel } from './cli-options.js';

/**
 * The CLI's logger: human-readable, colourised lines (pino-pretty) when `format` is `text`, else one JSON
 * object per line. Without a format: text when stdout is a terminal, JSON when it is a pipe or a file.
 */
export function cliLogger(level: LogLevel, format: 'text' | 'json' | undefined): Logger {
  const text = format ? format === 'text' : Boolean(process.stdout.isTTY);
  if (!text) return newLogger({ level });
  return newLogger({
    level,
    destination: pretty({
      colorize: Boolean(process.stdout.isTTY),
      sync: true,
      translateTime: 'HH:MM:ss.l',
      ignore: 'pid,hostname,reconcileID',
      singleLine: true,
    }),
  });
}
