import type { Logger } from '@kubeloop/core';
import { LRUCache } from 'lru-cache';

/**
 * WarningHandler knows what to do with the text of a server `Warning: 299` header (client-go
 * `rest.WarningHandler`, e.g. "apps/v1beta1 Deployment is deprecated"). It must not throw.
 */
export interface WarningHandler {
  handleWarning(message: string): void;
}

/** A {@link WarningHandler} that drops every warning (client-go `NoWarnings`). */
export const noWarnings: WarningHandler = Object.freeze({ handleWarning: () => {} });

/**
 * A {@link WarningHandler} that logs each distinct warning text once at `warn` (`{ warning }`), like
 * kubectl's de-duplicating handler (client-go `WarningWriterOptions{Deduplicate: true}`). The set of texts
 * already logged is bounded (an LRU of `maxTexts`, default 1024): a text evicted from it may be logged again.
 */
export function newWarningLogger(logger: Logger, options: { maxTexts?: number } = {}): WarningHandler {
  const seen = new LRUCache<string, true>({ max: Math.max(1, options.maxTexts ?? 1024) });
  return {
    handleWarning(message: string): void {
      if (seen.get(message)) return;
      seen.set(message, true);
      logger.warn({ warning: message }, 'warning from the API server');
    },
  };
}
