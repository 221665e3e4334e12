/**
 * The API server's HTTP exchange without a socket: a request object and a response object with the parts of
 * Node's `IncomingMessage` / `ServerResponse` API the server's handlers use, so an in-process request goes
 * through exactly the code a request over HTTPS does (authentication, fault rules, the request log, the
 * handlers), and the response comes back as status, headers and a streamed body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable, Writable } from 'node:stream';
import { EnvtestError } from './errors.js';

/** One HTTP-shaped request to {@link ApiServer.serveInProcess}. */
export interface InProcessRequest {
  /** `GET`, `POST`, `PUT`, `PATCH` or `DELETE`. */
  readonly method: string;
  /** Path and query, e.g. `/api/v1/namespaces/default/pods?limit=10`. */
  readonly path: string;
  /** Request headers (any case), e.g. `content-type`, `accept`, `authorization`. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  /** Aborting it before the answer rejects the call; after, it ends the body (a watch stops at the server). */
  readonly signal?: AbortSignal;
}

/** A body read once: as text, or chunk by chunk (a watch's events as the server writes them). */
export interface InProcessBody extends AsyncIterable<Uint8Array> {
  text(): Promise<string>;
  /** Stop reading: the server sees the connection close (a watch ends). */
  destroy(error?: Error): void;
}

/** The answer of {@link ApiServer.serveInProcess}: status, headers with lower-case names, and the body. */
export interface InProcessResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: InProcessBody;
}

/** Connection-level headers have no meaning without a connection (as on an HTTP/2 stream). */
const CONNECTION_HEADERS = new Set(['transfer-encoding', 'connection', 'keep-alive', 'upgrade']);

function abortError(signal: AbortSignal): Error {
  const r = signal.reason;
  if (r instanceof Error) return r;
  const e = new Error('This operation was aborted');
  e.name = 'AbortError';
  return e;
}

/** The request side: a readable body plus the fields of `IncomingMessage` the server reads. */
export function inProcessIncoming(request: InProcessRequest): IncomingMessage {
  const body = request.body;
  const req = new Readable({ read() {} }) as Readable & Record<string, unknown>;
  if (body !== undefined && body.length > 0)
    req.push(typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body));
  req.push(null);
  const headers: Record<string, string> = { host: 'envtest.in-process' };
  for (const [k, v] of Object.entries(request.headers ?? {})) headers[k.toLowerCase()] = v;
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  req.headers = headers;
  req.method = request.method.toUpperCase();
  req.url = request.path.startsWith('/') ? request.path : `/${request.path}`;
  req.httpVersionMajor = 1;
  req.httpVersion = '1.1';
  // Loopback, no TLS: no peer certificate, so only bearer tokens authenticate.
  req.socket = { remoteAddress: '127.0.0.1', remotePort: 0, encrypted: false };
  return req as unknown as IncomingMessage;
}

interface Pending {
  readonly chunk: Buffer;
  readonly done: (err?: Error | null) => void;
}

/**
 * The response side: a `Writable` with `writeHead`/`setHeader`/`flushHeaders`/`headersSent`. A written chunk
 * counts as buffered (`writableLength`) until the reader takes it, as unread bytes of a socket do, so a slow
 * watcher is closed by the server's buffer bound and a large list waits for `drain` exactly as over TCP.
 */
export class InProcessServerResponse extends Writable {
  statusCode = 200;
  statusMessage = '';
  readonly #headers = new Map<string, [string, number | string | readonly string[]]>();
  #headersSent = false;
  readonly #queue: Pending[] = [];
  #ended = false;
  #error: Error | undefined;
  #wake: (() => void) | undefined;
  readonly head: Promise<InProcessResponse>;
  #resolveHead!: (r: InProcessResponse) => void;
  #rejectHead!: (e: Error) => void;

  constructor(signal?: AbortSignal) {
    super({ highWaterMark: 64 * 1024 });
    this.head = new Promise((resolve, reject) => {
      this.#resolveHead = resolve;
      this.#rejectHead = reject;
    });
    // a rejection nobody awaits (the caller stopped waiting) must not be unhandled
    this.head.catch(() => undefined);
    if (signal) {
      const onAbort = () => this.#abort(abortError(signal));
      if (signal.aborted) queueMicrotask(onAbort);
      else {
        signal.addEventListener('abort', onAbort, { once: true });
        this.once('close', () => signal.removeEventListener('abort', onAbort));
      }
    }
  }

  get headersSent(): boolean {
    return this.#headersSent;
  }

  setHeader(name: string, value: number | string | readonly string[]): this {
    if (this.#headersSent) throw new EnvtestError('ENVTEST_HEADERS_SENT', `cannot set ${name}: headers sent`);
    this.#headers.set(name.toLowerCase(), [name, value]);
    return this;
  }

  getHeader(name: string): number | string | readonly string[] | undefined {
    return this.#headers.get(name.toLowerCase())?.[1];
  }

  hasHeader(name: string): boolean {
    return this.#headers.has(name.toLowerCase());
  }

  removeHeader(name: string): void {
    this.#headers.delete(name.toLowerCase());
  }

  writeHead(code: number, ...rest: unknown[]): this {
    if (this.#headersSent)
      throw new EnvtestError('ENVTEST_HEADERS_SENT', 'writeHead after the headers were sent');
    this.statusCode = code;
    const headers = rest.find((a) => a !== null && typeof a === 'object' && !Array.isArray(a)) as
      | Record<string, number | string | readonly string[]>
      | undefined;
    if (typeof rest[0] === 'string') this.statusMessage = rest[0];
    for (const [k, v] of Object.entries(headers ?? {})) this.#headers.set(k.toLowerCase(), [k, v]);
    this.#headersSent = true;
    const out: Record<string, string | string[]> = {};
    for (const [k, [, v]] of this.#headers) {
      if (CONNECTION_HEADERS.has(k)) continue;
      out[k] = Array.isArray(v) ? v.map(String) : String(v);
    }
    this.#resolveHead({ status: code, headers: out, body: this.#body() });
    return this;
  }

  flushHeaders(): void {
    if (!this.#headersSent) this.writeHead(this.statusCode);
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.flushHeaders();
    this.#queue.push({ chunk, done });
    this.#notify();
  }

  override _final(done: (err?: Error | null) => void): void {
    this.flushHeaders();
    this.#ended = true;
    this.#notify();
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    if (!this.#ended) {
      // the server dropped the connection mid-answer (a fault, restart, or a watch it closed)
      this.#error ??= err ?? connectionReset();
      this.#rejectHead(this.#error);
    }
    // chunks written before the drop are still read, then the error (as bytes sent before a reset arrive)
    this.#notify();
    done(null);
  }

  /** The reader went away (or aborted): the server sees the connection close. */
  #abort(err: Error): void {
    if (this.#ended && this.#queue.length === 0) return;
    this.#error ??= err;
    this.#rejectHead(err);
    this.destroy();
  }

  #notify(): void {
    const w = this.#wake;
    this.#wake = undefined;
    w?.();
  }

  #body(): InProcessBody {
    const self = this;
    let consumed = false;
    const next = async (): Promise<Buffer | undefined> => {
      for (;;) {
        const p = self.#queue.shift();
        if (p) {
          p.done();
          return p.chunk;
        }
        if (self.#error) throw self.#error;
        if (self.#ended || self.destroyed) return undefined;
        await new Promise<void>((r) => {
          self.#wake = r;
        });
      }
    };
    const iterate = async function* (): AsyncGenerator<Uint8Array> {
      if (consumed) throw new EnvtestError('ENVTEST_BODY_CONSUMED', 'the body was already read');
      consumed = true;
      try {
        for (;;) {
          const c = await next();
          if (c === undefined) return;
          yield c;
        }
      } finally {
        // the reader stopped early (break, throw): hang up, as a client closing its connection does
        if (!self.#ended || self.#queue.length > 0) self.#abort(readerGone());
      }
    };
    return {
      [Symbol.asyncIterator]: iterate,
      async text() {
        const parts: Uint8Array[] = [];
        for await (const c of iterate()) parts.push(c);
        return Buffer.concat(parts).toString('utf8');
      },
      destroy(error?: Error) {
        self.#abort(error ?? readerGone());
      },
    };
  }
}

function connectionReset(): Error {
  return Object.assign(new Error('other side closed (in-process API server dropped the response)'), {
    code: 'ECONNRESET',
  });
}

function readerGone(): Error {
  return Object.assign(new Error('the in-process response body was destroyed by its reader'), {
    code: 'ERR_STREAM_DESTROYED',
  });
}

/** Typed view of the response for the server's handlers. */
export function asServerResponse(res: InProcessServerResponse): ServerResponse {
  return res as unknown as ServerResponse;
}
