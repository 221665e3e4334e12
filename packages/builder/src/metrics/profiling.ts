import type { ServerResponse } from 'node:http';
import { Session } from 'node:inspector/promises';
import { getHeapSnapshot } from 'node:v8';
import type { RequestHandler } from '../healthz/http-server.js';

/** Paths of the profiling endpoints on the metrics server. */
export const PROFILE_PATH = '/debug/pprof/profile';
export const HEAP_PATH = '/debug/pprof/heap';

/** Longest CPU profile one request may ask for, in seconds. */
const MAX_PROFILE_SECONDS = 300;

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${body}\n`);
}

/**
 * The profiling endpoints (controller-runtime's `pprof` handlers, in Node's formats): `GET
 * /debug/pprof/profile?seconds=N` records a CPU profile of this process for N seconds (default 30, at most 300)
 * through `node:inspector` and answers the `.cpuprofile` JSON (open it in Chrome DevTools or speedscope);
 * `GET /debug/pprof/heap` streams a V8 heap snapshot (`.heapsnapshot`). One CPU profile at a time (409 while
 * one runs). Served only when `metrics.profiling` is on, behind the metrics server's filter.
 */
export function profilingHandlers(): Record<string, RequestHandler> {
  let profiling = false;
  return {
    [PROFILE_PATH]: async (req, res) => {
      if (req.method !== 'GET') return text(res, 405, 'method not allowed');
      const q = new URL(req.url ?? '/', 'http://metrics').searchParams.get('seconds');
      const seconds = q === null ? 30 : Number(q);
      if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_PROFILE_SECONDS)
        return text(res, 400, `seconds must be a number in (0, ${MAX_PROFILE_SECONDS}]`);
      if (profiling) return text(res, 409, 'a CPU profile is already being recorded');
      profiling = true;
      const session = new Session();
      try {
        session.connect();
        await session.post('Profiler.enable');
        await session.post('Profiler.start');
        await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
        const { profile } = await session.post('Profiler.stop');
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-disposition': 'attachment; filename="profile.cpuprofile"',
        });
        res.end(JSON.stringify(profile));
      } finally {
        session.disconnect();
        profiling = false;
      }
    },
    [HEAP_PATH]: (req, res) => {
      if (req.method !== 'GET') return text(res, 405, 'method not allowed');
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-disposition': 'attachment; filename="heap.heapsnapshot"',
      });
      const snapshot = getHeapSnapshot();
      snapshot.pipe(res);
      return new Promise<void>((resolve) => {
        res.once('close', () => {
          snapshot.destroy();
          resolve();
        });
      });
    },
  };
}
