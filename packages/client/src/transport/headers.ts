import type { RequestCredentials, RestConfig } from '@kubeloop/config';

/** The messages of `Warning: 299 - "…"` headers (RFC 7234 warn-text, as the API server sends them). */
export function parseWarningHeaders(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const out: string[] = [];
  for (const header of Array.isArray(value) ? value : [value]) {
    const re = /(\d{3})\s+\S+\s+"((?:[^"\\]|\\.)*)"(?:\s+"[^"]*")?\s*(?:,\s*|$)/g;
    for (const m of header.matchAll(re)) {
      if (m[1] === '299') out.push((m[2] ?? '').replace(/\\(.)/g, '$1'));
    }
  }
  return out;
}

/** Integer seconds of a `Retry-After` header, or undefined (HTTP-date is not supported, as in client-go). */
export function retryAfterSeconds(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || !/^\s*\d+\s*$/.test(v)) return undefined;
  return Number.parseInt(v, 10);
}

/** `path` with client-go's `timeout=<duration>` query parameter (Go duration syntax), unless it has one. @internal */
export function withTimeoutQuery(path: string, timeoutMs: number): string {
  if (/[?&]timeout=/.test(path)) return path;
  const value = timeoutMs % 1000 === 0 ? `${timeoutMs / 1000}s` : `${timeoutMs}ms`;
  return `${path}${path.includes('?') ? '&' : '?'}timeout=${value}`;
}

/** The `timeoutSeconds` query parameter of a watch path, if any. @internal */
export function timeoutSecondsOf(path: string): number | undefined {
  const m = /[?&]timeoutSeconds=(\d+)/.exec(path);
  return m ? Number.parseInt(m[1] ?? '', 10) : undefined;
}

/**
 * A header value as the bytes Go's HTTP client sends: the UTF-8 encoding of the text. undici writes a header
 * string as Latin-1 and refuses one with a character beyond it, so text with non-ASCII characters (a
 * User-Agent made from a script named `控制器.mjs`, an impersonated user `Юля`) is turned into the string whose
 * Latin-1 bytes are its UTF-8 bytes; ASCII (every token, every header we make ourselves) is unchanged.
 */
function utf8Wire(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: any character outside ASCII
  return /[^\x00-\x7f]/.test(value) ? Buffer.from(value, 'utf8').toString('latin1') : value;
}

/**
 * The request headers: `User-Agent`, `Accept-Encoding: gzip` unless compression is off, the caller's, then
 * the credentials' (a caller's `Authorization` wins, client-go's bearer round-tripper rule). Values with
 * non-ASCII text go out as their UTF-8 bytes, as client-go sends them. @internal
 */
export function requestHeaders(
  config: RestConfig,
  callerHeaders: Readonly<Record<string, string>> | undefined,
  creds: RequestCredentials,
): Record<string, string | string[]> {
  const h: Record<string, string | string[]> = {};
  h['user-agent'] = utf8Wire(config.userAgent);
  if (!config.disableCompression) h['accept-encoding'] = 'gzip';
  for (const [k, v] of Object.entries(callerHeaders ?? {})) h[k.toLowerCase()] = utf8Wire(v);
  for (const [k, v] of Object.entries(creds.headers)) {
    const key = k.toLowerCase();
    if (key === 'authorization' && h.authorization !== undefined) continue;
    h[key] = utf8Wire(v);
  }
  for (const [k, v] of Object.entries(creds.multiHeaders ?? {})) h[k.toLowerCase()] = v.map(utf8Wire);
  return h;
}
