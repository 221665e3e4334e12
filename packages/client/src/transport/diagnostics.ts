import diagnosticsChannel from 'node:diagnostics_channel';

/**
 * Diagnostics of the transport, published on `node:diagnostics_channel` so any logger or metrics library can
 * subscribe without the client importing one. Messages carry no header, body, token or query string.
 */
export const channels = {
  /** One per finished attempt: {@link RequestDiagnostic}. */
  request: diagnosticsChannel.channel('kubeloop:client:request'),
  /** Before each retry: {@link RetryDiagnostic}. */
  retry: diagnosticsChannel.channel('kubeloop:client:retry'),
  /** When the client-side limiter made a request wait: {@link ThrottleDiagnostic}. */
  throttle: diagnosticsChannel.channel('kubeloop:client:throttle'),
  /** Non-fatal notes (e.g. `Warning:` headers, ignored settings): {@link WarningDiagnostic}. */
  warning: diagnosticsChannel.channel('kubeloop:client:warning'),
} as const;

export interface RequestDiagnostic {
  readonly method: string;
  /** Host and path, without the query string. */
  readonly url: string;
  /** HTTP status, or 0 when the attempt failed without a response. */
  readonly status: number;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly durationMs: number;
  /** Error code when `status` is 0. */
  readonly errorCode?: string;
}

export interface RetryDiagnostic {
  readonly method: string;
  readonly url: string;
  /** The status that caused the retry (a connection reset counts as 500). */
  readonly status: number;
  /** Number of the retry about to happen, from 1. */
  readonly retry: number;
  /** Milliseconds waited before the retry (≥ Retry-After). */
  readonly waitMs: number;
  readonly reason: string;
}

export interface ThrottleDiagnostic {
  readonly method: string;
  readonly url: string;
  readonly waitedMs: number;
  readonly reason: 'client-side throttling, not priority and fairness';
}

export interface WarningDiagnostic {
  readonly message: string;
}
