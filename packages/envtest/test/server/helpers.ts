/** Test helpers: raw HTTPS requests and watch readers against an in-process server (undici, trusting its CA). */
import { Agent, type Dispatcher, request } from 'undici';
import { vi } from 'vitest';
import { type ApiServer, type ApiServerOptions, startApiServer } from '../../src/index.js';

// biome-ignore lint/suspicious/noExplicitAny: JSON read back in assertions
export type Json = any;

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Json;
  readonly text: string;
}

export interface TestServer {
  readonly server: ApiServer;
  readonly dispatcher: Dispatcher;
  req(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  /** Open a watch; events are collected as they arrive. */
  watch(path: string, headers?: Record<string, string>): Promise<WatchReader>;
  close(): Promise<void>;
}

export interface WatchReader {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly events: Json[];
  /** Raw text received so far. */
  readonly raw: () => string;
  /** Resolves when the server ended the stream. */
  readonly ended: Promise<void>;
  /** Wait until `pred(events)` holds (deadline 5 s by default). */
  until(pred: (events: Json[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): void;
}

/** Wait for a condition with a deadline (no fixed sleeps): a thin shape over `vi.waitFor`. */
export async function waitFor(
  pred: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
  what = 'condition',
): Promise<void> {
  await vi.waitFor(
    async () => {
      if (!(await pred())) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    },
    { timeout: timeoutMs, interval: 10 },
  );
}

export async function startTestServer(options: ApiServerOptions = {}, token?: string): Promise<TestServer> {
  const server = await startApiServer(options);
  const dispatcher = new Agent({ connect: { ca: server.caPem }, headersTimeout: 30_000, bodyTimeout: 0 });
  const auth = token ?? server.token;
  const req = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply> => {
    const h: Record<string, string> = { accept: 'application/json', ...headers };
    if (headers.authorization === undefined && auth) h.authorization = `Bearer ${auth}`;
    if (headers.authorization === '') delete h.authorization;
    if (body !== undefined && !h['content-type']) h['content-type'] = 'application/json';
    const res = await request(new URL(path, server.url), {
      method: method as Dispatcher.HttpMethod,
      headers: h,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      dispatcher,
    });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // text
    }
    return { status: res.statusCode, headers: res.headers as Reply['headers'], body: parsed, text };
  };
  const watch = async (path: string, headers: Record<string, string> = {}): Promise<WatchReader> => {
    const ac = new AbortController();
    const res = await request(new URL(path, server.url), {
      method: 'GET',
      headers: { accept: 'application/json', authorization: `Bearer ${auth}`, ...headers },
      dispatcher,
      signal: ac.signal,
    });
    const events: Json[] = [];
    let raw = '';
    let buf = '';
    const ended = (async () => {
      try {
        for await (const chunk of res.body) {
          const s = Buffer.from(chunk as Uint8Array).toString('utf8');
          raw += s;
          buf += s;
          let i = buf.indexOf('\n');
          while (i >= 0) {
            const line = buf.slice(0, i);
            buf = buf.slice(i + 1);
            if (line.trim()) events.push(JSON.parse(line));
            i = buf.indexOf('\n');
          }
        }
      } catch {
        // aborted
      }
    })();
    return {
      status: res.statusCode,
      headers: res.headers as WatchReader['headers'],
      events,
      raw: () => raw,
      ended,
      until: (pred, timeoutMs = 5000) => waitFor(() => pred(events), timeoutMs, `watch events on ${path}`),
      close: () => ac.abort(),
    };
  };
  return {
    server,
    dispatcher,
    req,
    watch,
    close: async () => {
      await server.stop();
      await dispatcher.close();
    },
  };
}

/** A minimal valid pod. */
export function pod(name: string, labels: Record<string, string> = {}, extra: Json = {}): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels, ...(extra.metadata ?? {}) },
    spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }], ...(extra.spec ?? {}) },
  };
}

/** The whole 400 BadRequest Status body kube-apiserver writes with `message`. */
export function badRequest(message: string): Json {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: 'BadRequest',
    code: 400,
  };
}

/** A valid events.k8s.io/v1 Event (reporting fields, eventTime, regarding a pod), with `extra` fields over it. */
export function eventV1(name: string, extra: Record<string, unknown> = {}): Json {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name },
    eventTime: '2024-01-01T00:00:00.000000Z',
    reportingController: 'example.com/ctl',
    reportingInstance: 'ctl-1',
    action: 'Testing',
    reason: 'Tested',
    type: 'Normal',
    note: 'hello',
    regarding: { kind: 'Pod', namespace: 'default', name: 'p', apiVersion: 'v1' },
    ...extra,
  };
}
