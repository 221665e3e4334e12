// A minimal HTTP/1.1 client over a raw TLS (or TCP) socket that keeps what a normal client hides:
// the exact chunks of a chunked body, whether the chunked terminator arrived, and how the socket ended.
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { vi } from 'vitest';

export interface RawChunk {
  readonly data: Buffer;
  /** ms since the epoch when the chunk's last byte arrived */
  readonly at: number;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  /** chunked bodies: one entry per HTTP chunk; other bodies: one entry per socket read */
  chunks: RawChunk[];
  body: Buffer;
  /** 'clean' = chunked terminator (or full Content-Length) received; 'closed' = socket closed first;
   * 'reset' = socket error */
  end: 'clean' | 'closed' | 'reset';
}

export interface RawRequestOptions {
  url: string;
  path: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  ca?: string | Buffer;
  /** keep the connection alive after the response (default false: `Connection: close`) */
  keepAlive?: boolean;
}

export interface RawExchange {
  /** resolves when the status line and headers arrived */
  readonly head: Promise<{ status: number; headers: Record<string, string> }>;
  /** resolves when the response ended (cleanly or not) */
  readonly done: Promise<RawResponse>;
  /** chunks so far */
  readonly chunks: RawChunk[];
  readonly socket: Socket;
  destroy(): void;
}

export function rawRequest(opts: RawRequestOptions): RawExchange {
  const url = new URL(opts.url);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const socket: Socket =
    url.protocol === 'https:'
      ? tlsConnect({ host: url.hostname, port, servername: 'localhost', ...(opts.ca ? { ca: opts.ca } : {}) })
      : netConnect({ host: url.hostname, port });
  const lines = [
    `${opts.method ?? 'GET'} ${opts.path} HTTP/1.1`,
    `Host: ${url.host}`,
    `Connection: ${opts.keepAlive ? 'keep-alive' : 'close'}`,
    'Accept: application/json',
  ];
  for (const [k, v] of Object.entries(opts.headers ?? {})) lines.push(`${k}: ${v}`);
  if (opts.body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(opts.body)}`);
  socket.write(`${lines.join('\r\n')}\r\n\r\n${opts.body ?? ''}`);

  const res: RawResponse = { status: 0, headers: {}, chunks: [], body: Buffer.alloc(0), end: 'closed' };
  let buf = Buffer.alloc(0);
  let phase: 'head' | 'chunked' | 'length' | 'eof' | 'done' = 'head';
  let remaining = 0;
  let resolveHead!: (h: { status: number; headers: Record<string, string> }) => void;
  let rejectHead!: (e: Error) => void;
  const head = new Promise<{ status: number; headers: Record<string, string> }>((a, b) => {
    resolveHead = a;
    rejectHead = b;
  });
  head.catch(() => {});
  let resolveDone!: (r: RawResponse) => void;
  const done = new Promise<RawResponse>((a) => {
    resolveDone = a;
  });

  const finish = (how: RawResponse['end']) => {
    if (phase === 'done') return;
    if (phase === 'head') rejectHead(new Error(`connection ended before the response head (${how})`));
    phase = 'done';
    res.end = how;
    res.body = Buffer.concat(res.chunks.map((c) => c.data));
    resolveDone(res);
    if (!opts.keepAlive) socket.destroy();
  };

  const parse = () => {
    for (;;) {
      if (phase === 'head') {
        const i = buf.indexOf('\r\n\r\n');
        if (i < 0) return;
        const [statusLine, ...hs] = buf.subarray(0, i).toString('latin1').split('\r\n');
        res.status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0);
        for (const h of hs) {
          const c = h.indexOf(':');
          res.headers[h.slice(0, c).trim().toLowerCase()] = h.slice(c + 1).trim();
        }
        buf = buf.subarray(i + 4);
        resolveHead({ status: res.status, headers: res.headers });
        if (res.headers['transfer-encoding']?.toLowerCase().includes('chunked')) phase = 'chunked';
        else if (res.headers['content-length'] !== undefined) {
          phase = 'length';
          remaining = Number(res.headers['content-length']);
          if (remaining === 0) return finish('clean');
        } else phase = 'eof';
      } else if (phase === 'chunked') {
        const i = buf.indexOf('\r\n');
        if (i < 0) return;
        const size = Number.parseInt(buf.subarray(0, i).toString('latin1'), 16);
        if (size === 0) {
          if (buf.length < i + 4) return;
          return finish('clean');
        }
        if (buf.length < i + 2 + size + 2) return;
        res.chunks.push({ data: Buffer.from(buf.subarray(i + 2, i + 2 + size)), at: Date.now() });
        buf = buf.subarray(i + 2 + size + 2);
      } else if (phase === 'length') {
        if (buf.length === 0) return;
        const take = buf.subarray(0, remaining);
        res.chunks.push({ data: Buffer.from(take), at: Date.now() });
        remaining -= take.length;
        buf = buf.subarray(take.length);
        if (remaining === 0) return finish('clean');
      } else if (phase === 'eof') {
        if (buf.length === 0) return;
        res.chunks.push({ data: Buffer.from(buf), at: Date.now() });
        buf = Buffer.alloc(0);
      } else return;
    }
  };

  socket.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    parse();
  });
  socket.on('end', () => finish(phase === 'eof' ? 'clean' : 'closed'));
  socket.on('close', () => finish('closed'));
  socket.on('error', () => finish('reset'));

  return { head, done, chunks: res.chunks, socket, destroy: () => socket.destroy() };
}

/** The JSON lines of a body (every complete line; an unterminated last line is returned in `rest`). */
export function splitLines(body: Buffer): { lines: string[]; rest: string } {
  const text = body.toString('utf8');
  const parts = text.split('\n');
  const rest = parts.pop() ?? '';
  return { lines: parts, rest };
}

/** Wait for a condition with a deadline (never a fixed sleep): a thin shape over `vi.waitFor`. */
export async function waitFor(
  cond: () => boolean | Promise<boolean>,
  what: string,
  deadlineMs = 10_000,
): Promise<void> {
  await vi.waitFor(
    async () => {
      if (!(await cond())) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    },
    { timeout: deadlineMs, interval: 10 },
  );
}
