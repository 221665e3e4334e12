import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Informers } from '@kubeloop/cache';
import { discardLogger, type Logger } from '../logger.js';
import { OptionalHttpServer } from './http-server.js';

/**
 * A health check (controller-runtime `healthz.Checker`): resolves when healthy, throws or rejects when not.
 * `signal` aborts when the probe's time is up. Keep checks fast: the kubelet times probes out (1 s default).
 */
export type Checker = (signal: AbortSignal) => void | Promise<void>;

/**
 * A failed check whose message is safe to show on the (unauthenticated) probe endpoint. Other errors are
 * reported as `reason withheld`, as controller-runtime does. Code `'ERR_HEALTH_CHECK'`.
 */
export class HealthCheckError extends Error {
  readonly code = 'ERR_HEALTH_CHECK' as const;
  override readonly name = 'HealthCheckError';
}

/** A checker that always passes (controller-runtime `healthz.Ping`). */
export const ping: Checker = () => {};

/** A manager as {@link cacheSyncCheck} sees it: its cache and how far its start sequence got. */
export interface SyncingManager {
  getCache(): SyncingCache;
  /** Why the manager is not ready yet, or `undefined`. */
  readinessPending(): string | undefined;
}

/** What {@link cacheSyncCheck} needs from a cache. */
export interface SyncingCache {
  /** Resolves `true` once every informer started so far has synced (`false` at once on an aborted signal if not). */
  waitForCacheSync: Informers['waitForCacheSync'];
  /** Whether the cache runs; absent counts as running. */
  isStarted?(): boolean;
  /** Names of informers that have not synced yet, when the cache can tell. */
  unsyncedInformers?(): readonly string[];
}

/**
 * A readiness check that fails until the cache has started and every informer it runs has synced — not
 * vacuously ready before the cache starts (case C28). Its failure message names the unsynced informers
 * when the cache can tell. Given a manager (`cacheSyncCheck(mgr)`), it also waits until the manager's
 * controllers have started and synced their sources — so a leader is never ready merely because its
 * controllers have not created their informers yet — while a standby is ready once its cache synced.
 */
export function cacheSyncCheck(target: SyncingCache | SyncingManager): Checker {
  const manager = 'readinessPending' in target ? target : undefined;
  const cache = manager ? manager.getCache() : (target as SyncingCache);
  return async () => {
    const pending = manager?.readinessPending();
    if (pending) throw new HealthCheckError(pending);
    if (cache.isStarted && !cache.isStarted()) throw new HealthCheckError('the cache has not started');
    const now = new AbortController();
    now.abort();
    if (await cache.waitForCacheSync(now.signal)) return;
    const names = cache.unsyncedInformers?.() ?? [];
    throw new HealthCheckError(
      names.length > 0 ? `informers not synced: ${names.join(', ')}` : 'not every informer has synced',
    );
  };
}

/** Per-check time budget of a probe request, in ms. */
const CHECK_TIMEOUT_MS = 1000;

interface CheckStatus {
  readonly name: string;
  readonly healthy: boolean;
  readonly excluded: boolean;
  readonly reason?: string;
}

/** Named checks served under one path (controller-runtime `healthz.Handler`). */
export class CheckSet {
  readonly #checks = new Map<string, Checker>();
  constructor(readonly kind: 'healthz' | 'readyz') {}

  /** @throws HealthCheckError when `name` is empty, contains `/`, or is taken. */
  add(name: string, check: Checker): void {
    if (!name || name.includes('/')) {
      throw new HealthCheckError(
        `${this.kind} check name ${JSON.stringify(name)} must be non-empty, without '/'`,
      );
    }
    if (this.#checks.has(name))
      throw new HealthCheckError(`${this.kind} check ${JSON.stringify(name)} is already added`);
    this.#checks.set(name, check);
  }

  names(): string[] {
    return [...this.#checks.keys()];
  }

  /** Runs one check; resolves to an error message or undefined. */
  async run(name: string, check: Checker): Promise<{ ok: boolean; reason?: string }> {
    const ac = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        Promise.resolve().then(() => check(ac.signal)),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            ac.abort();
            reject(new HealthCheckError(`check ${name} timed out after ${CHECK_TIMEOUT_MS} ms`));
          }, CHECK_TIMEOUT_MS);
        }),
      ]);
      return { ok: true };
    } catch (err) {
      return { ok: false, reason: err instanceof HealthCheckError ? err.message : undefined };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Answers `GET /<kind>` (every check, `?exclude=a&exclude=b` or `?exclude=a,b` skipped, `?verbose` lists
   * every check) and `GET /<kind>/<name>` (that check only). Success: 200 `ok`; failure: 503 with one
   * `[+]name ok` / `[-]name failed: <reason>` line per check (reasons of other than
   * {@link HealthCheckError} withheld). With no checks, a `ping` check is reported.
   */
  async serve(sub: string, query: URLSearchParams, res: ServerResponse, log: Logger): Promise<void> {
    if (sub) {
      const check = this.#checks.get(sub);
      if (!check) return text(res, 404, `no ${this.kind} check named ${sub}\n`);
      const r = await this.run(sub, check);
      return r.ok
        ? text(res, 200, 'ok')
        : text(res, 503, `${this.kind} check ${sub} failed: ${r.reason ?? 'reason withheld'}\n`);
    }
    const excluded = new Set(
      query
        .getAll('exclude')
        .flatMap((v) => v.split(','))
        .map((v) => v.trim())
        .filter(Boolean),
    );
    const parts: CheckStatus[] = await Promise.all(
      [...this.#checks].map(async ([name, check]): Promise<CheckStatus> => {
        if (excluded.has(name)) return { name, healthy: true, excluded: true };
        const r = await this.run(name, check);
        return { name, healthy: r.ok, excluded: false, ...(r.reason ? { reason: r.reason } : {}) };
      }),
    );
    for (const p of parts) excluded.delete(p.name);
    if (this.#checks.size === 0) parts.push({ name: 'ping', healthy: true, excluded: false });
    parts.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const failed = parts.some((p) => !p.healthy);
    if (!failed && !query.has('verbose')) return text(res, 200, 'ok');
    let body = '';
    for (const p of parts) {
      if (p.excluded) body += `[+]${p.name} excluded: ok\n`;
      else if (p.healthy) body += `[+]${p.name} ok\n`;
      else body += `[-]${p.name} failed: ${p.reason ?? 'reason withheld'}\n`;
    }
    if (excluded.size > 0) {
      body += `warn: some health checks cannot be excluded: no matches for ${[...excluded].map((e) => `"${e}"`).join(', ')}\n`;
    }
    if (failed) {
      log.info({ failed: parts.filter((p) => !p.healthy).map((p) => p.name) }, `${this.kind} check failed`);
      body += `${this.kind} check failed\n`;
    } else body += `${this.kind} check passed\n`;
    return text(res, failed ? 503 : 200, body);
  }
}

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'x-content-type-options': 'nosniff',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** Options of {@link HealthProbeServer}. */
export interface HealthProbeServerOptions {
  /** `host:port` (`":8081"`, `"127.0.0.1:0"`); `"0"` or `""` disables (controller-runtime `HealthProbeBindAddress`). */
  readonly bindAddress: string;
  /** @defaultValue `/healthz` */
  readonly livenessEndpointName?: string;
  /** @defaultValue `/readyz` */
  readonly readinessEndpointName?: string;
  readonly logger?: Logger;
}

/**
 * The manager's probe server (controller-runtime's health probe listener): liveness checks on
 * `/healthz`, readiness checks on `/readyz`, per-check subpaths, `?verbose`, `?exclude=name`. Run it as an
 * HTTP-server runnable (`start`/`ready`); it answers every probe from checks alone, never waiting on the
 * API server.
 */
export class HealthProbeServer extends OptionalHttpServer {
  readonly healthz = new CheckSet('healthz');
  readonly readyz = new CheckSet('readyz');
  readonly #live: string;
  readonly #ready: string;
  readonly #log: Logger;

  /** @throws BindAddressError for a malformed bind address. */
  constructor(options: HealthProbeServerOptions) {
    const log = options.logger ?? discardLogger;
    super('health probes', options.bindAddress, 'health.bindAddress', log);
    this.#log = log;
    this.#live = trimSlash(options.livenessEndpointName ?? '/healthz');
    this.#ready = trimSlash(options.readinessEndpointName ?? '/readyz');
  }

  addHealthzCheck(name: string, check: Checker): void {
    this.healthz.add(name, check);
  }

  addReadyzCheck(name: string, check: Checker): void {
    this.readyz.add(name, check);
  }

  /** The request handler (usable on another server). */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://probe');
    const path = trimSlash(url.pathname);
    if (req.method !== 'GET' && req.method !== 'HEAD') return text(res, 405, 'method not allowed\n');
    for (const [base, set] of [
      [this.#live, this.healthz],
      [this.#ready, this.readyz],
    ] as const) {
      if (path === base) return set.serve('', url.searchParams, res, this.#log);
      if (path.startsWith(`${base}/`))
        return set.serve(path.slice(base.length + 1), url.searchParams, res, this.#log);
    }
    return text(res, 404, 'not found\n');
  }
}

function trimSlash(p: string): string {
  const withLead = p.startsWith('/') ? p : `/${p}`;
  return withLead.length > 1 && withLead.endsWith('/') ? withLead.slice(0, -1) : withLead;
}
