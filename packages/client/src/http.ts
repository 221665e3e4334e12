/**
 * The request/response shape the API layer needs from the HTTP transport. `Transport` (in
 * `./transport`) implements it; anything with the same shape (e.g. a recording wrapper) can be used.
 */

/** One HTTP request to the API server. */
export interface HttpRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path and query, relative to `config.host` (a path prefix in `host` is kept). */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  readonly signal?: AbortSignal;
  /**
   * A watch or other long stream: not throttled, no request timeout, no 429/5xx or reset retries
   * (client-go); cut by the idle watchdog when no byte arrives within its bound. The one retry it can get is
   * after a 401 that refreshed the credentials.
   */
  readonly stream?: boolean;
}

/** A body that can be read once: as text, or chunk by chunk. */
export interface HttpBody extends AsyncIterable<Uint8Array | string> {
  text(): Promise<string>;
  destroy?(error?: Error): unknown;
}

/** The answer: status, headers (lower-case names) and a body to consume exactly once. */
export interface HttpResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: HttpBody;
}

/** HttpTransport knows how to send one request to one API server (auth, TLS, throttling, retries included). */
export interface HttpTransport {
  request(req: HttpRequest): Promise<HttpResponse>;
  /** Closes the connections; `force` destroys them at once, failing requests in flight. */
  close(options?: { force?: boolean }): Promise<void>;
}

/** The first value of a header. */
export function headerValue(headers: HttpResponse['headers'], name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}
