import type { IncomingMessage, ServerResponse } from 'node:http';
import { FaultError } from './errors.js';
import { bearerToken, matchesRequest } from './match.js';
import { queryRequests, type RequestQuery, type RequestRecord } from './request-log.js';
import { holdRequest, tryAnswer } from './request-rules.js';
import { type FaultHandle, Rule } from './rule.js';
import type { FaultHost, RequestContext, WatchFaults, WatchWriter } from './seam.js';
import type {
  BlackholeSpec,
  DelayEventsSpec,
  DelayRequestsSpec,
  EndWatchesSpec,
  ExpireSpec,
  FailRequestsSpec,
  FaultSpec,
  RequireSelectorSpec,
  ShapeWatchSpec,
  SuppressInitialEventsEndSpec,
} from './spec.js';
import { validateFaultSpec } from './spec.js';
import { isEmptyPlan, planWatch, WatchSession } from './watch-session.js';

type Params<S> = Omit<S, 'type'>;

/**
 * Fault injection for the envtest API server, reachable as `server.faults`.
 *
 * Rules are added with {@link FaultInjector.add} (or the typed helpers `failRequests`, `expire`, `endWatches`,
 * `blackhole`, `shapeWatch`, `delayEvents`, `suppressInitialEventsEnd`, `requireSelector`, `delayRequests`),
 * each returning a {@link FaultHandle} with `hits` and `clear()`. Matching `delayRequests` rules hold a
 * request first; then request rules are checked in the order they were added and the first that acts answers
 * the request. A watch gets one `endWatch`, one `shapeWatch`, one `suppressInitialEventsEnd` and every
 * matching `delayEvents`. `times` counts requests, watches or (for `delayEvents`) events acted on.
 * {@link FaultInjector.reset} removes every rule. Rules run after authentication and before routing, so a
 * request a rule answers never touches the store.
 *
 * Server-side operations (`compact`, `setWatchHistoryLimit`, `restart`, `openConnections`) call the server
 * core; {@link FaultInjector.requests} queries the server's request log.
 */
export class FaultInjector {
  private readonly rules: Rule[] = [];
  private nextId = 1;
  private readonly blackholed = new Set<ServerResponse>();
  /** Bearer token per request, so watch rules can match on it (never logged). */
  private readonly tokens = new WeakMap<RequestContext, string | undefined>();
  private readonly server: FaultHost;

  /** @param server the API server core (see {@link FaultHost}); `undefined` for unit tests of the rules. */
  constructor(server: FaultHost | undefined) {
    this.server = server ?? {};
  }

  // ------------------------------------------------------------------ rules

  /**
   * Add a rule.
   * @throws FaultError `EINVALID` if the spec is malformed (the message names the field).
   */
  add(spec: FaultSpec): FaultHandle {
    const checked = validateFaultSpec(structuredClone(spec));
    const rule = new Rule(`f${this.nextId++}`, checked, (r) => this.forget(r));
    this.rules.push(rule);
    return rule;
  }

  /** Fail matching requests with a status (500, 503, 429 + `Retry-After`, …) or an empty or raw body. */
  failRequests(spec: Params<FailRequestsSpec>): FaultHandle {
    return this.add({ ...spec, type: 'fail' });
  }

  /** Answer matching lists, continues and watches with 410 Expired, as after a compaction (C03). */
  expire(spec: Params<ExpireSpec> = {}): FaultHandle {
    return this.add({ ...spec, type: 'expire' });
  }

  /** End matching watches cleanly after `afterMs` milliseconds and/or `afterEvents` events (C01, C11). */
  endWatches(spec: Params<EndWatchesSpec>): FaultHandle {
    return this.add({ ...spec, type: 'endWatch' });
  }

  /** Keep matching connections open and send nothing. */
  blackhole(spec: Params<BlackholeSpec> = {}): FaultHandle {
    return this.add({ ...spec, type: 'blackhole' });
  }

  /** Shape the bytes of matching watches (split, merge, truncate, raw lines, bare Status…) (C09, C10). */
  shapeWatch(spec: Params<ShapeWatchSpec>): FaultHandle {
    return this.add({ ...spec, type: 'shapeWatch' });
  }

  /** Delay watch events about one object (C08). */
  delayEvents(spec: Params<DelayEventsSpec>): FaultHandle {
    return this.add({ ...spec, type: 'delayEvents' });
  }

  /** Never send the `k8s.io/initial-events-end` bookmark on matching streaming-list watches (C04). */
  suppressInitialEventsEnd(spec: Params<SuppressInitialEventsEndSpec> = {}): FaultHandle {
    return this.add({ ...spec, type: 'suppressInitialEventsEnd' });
  }

  /** Answer 403 unless matching requests carry the given selectors (C19). */
  requireSelector(spec: Params<RequireSelectorSpec>): FaultHandle {
    return this.add({ ...spec, type: 'requireSelector' });
  }

  /** Hold matching requests `delayMs` ms, or until `barrier` of them wait and then release them together (C20). */
  delayRequests(spec: Params<DelayRequestsSpec>): FaultHandle {
    return this.add({ ...spec, type: 'delayRequests' });
  }

  /** Every rule added and not cleared, in order (exhausted ones included, with `active: false`). */
  list(): FaultHandle[] {
    return [...this.rules];
  }

  /** A rule by id. */
  get(id: string): FaultHandle | undefined {
    return this.rules.find((r) => r.id === id);
  }

  /** Remove every rule. Connections already black-holed stay so. */
  reset(): void {
    for (const r of [...this.rules]) r.clear();
  }

  private forget(rule: Rule): void {
    const i = this.rules.indexOf(rule);
    if (i >= 0) this.rules.splice(i, 1);
  }

  // ------------------------------------------------------------------ server operations

  /**
   * Compact the store now, as etcd does: older resourceVersions then give 410 Expired to exact lists and
   * continue tokens, and to watches from before the compaction (C03, C05). Returns the resourceVersion
   * compacted at (when the server reports it).
   * @throws FaultError `ENOTSUPPORTED` if the server has no store compaction.
   */
  compact(): { resourceVersion?: string } {
    const store = this.server.store;
    if (typeof store?.compact !== 'function')
      throw new FaultError('ENOTSUPPORTED', 'the server has no compact()');
    store.compact();
    return typeof store.rv === 'number' ? { resourceVersion: String(store.rv) } : {};
  }

  /**
   * Keep only the last `n` events in the watch history: a watch from an older resourceVersion gets an
   * ERROR event with 410 Expired, like the API server's watch cache.
   * @throws FaultError `EINVALID` for a negative or non-integer `n`; `ENOTSUPPORTED` without server support.
   */
  setWatchHistoryLimit(n: number): void {
    if (!Number.isInteger(n) || n < 0)
      throw new FaultError('EINVALID', 'watch history limit must be a non-negative integer');
    const store = this.server.store;
    if (typeof store?.setWatchHistoryLimit !== 'function')
      throw new FaultError('ENOTSUPPORTED', 'the server has no setWatchHistoryLimit()');
    store.setWatchHistoryLimit(n);
  }

  /**
   * Restart the server: drop every connection (black-holed ones included) and listen again on the same
   * port with the same CA and tokens. With `keepState: true` (default) every object and the resourceVersion
   * sequence survive, as an API server restart over the same etcd; `false` also loses every object.
   * Resolves when the server answers again.
   * @throws FaultError `ENOTSUPPORTED` without server support.
   */
  async restart(options: { keepState: boolean } = { keepState: true }): Promise<void> {
    const server = this.server;
    if (typeof server.restart !== 'function')
      throw new FaultError('ENOTSUPPORTED', 'the server has no restart()');
    this.releaseBlackholes(true);
    await server.restart({ keepState: options.keepState });
  }

  /**
   * Open TCP connections on the API port right now (C11).
   * @throws FaultError `ENOTSUPPORTED` without server support.
   */
  openConnections(): number {
    const server = this.server;
    if (typeof server.openConnections !== 'function')
      throw new FaultError('ENOTSUPPORTED', 'the server cannot count connections');
    return server.openConnections();
  }

  /** Number of responses currently black-holed. */
  blackholedCount(): number {
    return this.blackholed.size;
  }

  /** End (or with `destroy`, abort) every black-holed response. */
  releaseBlackholes(destroy = false): void {
    for (const res of this.blackholed) {
      if (destroy) res.destroy();
      else res.end();
    }
    this.blackholed.clear();
  }

  // ------------------------------------------------------------------ request log (the server's)

  /** Requests in the server's log matching `query` (all when absent), oldest first. */
  requests(query: RequestQuery = {}): RequestRecord[] {
    return queryRequests(this.server.requestLog ?? [], query);
  }

  /** Empty the server's request log. */
  clearRequests(): void {
    const log = this.server.requestLog;
    if (log !== undefined) log.length = 0;
  }

  // ------------------------------------------------------------------ seam

  /**
   * Called by the server for every API request after authentication and before routing. Holds the request
   * under matching `delayRequests` rules, then lets the first request rule that acts answer it.
   * @returns the id of the rule that answered, or `undefined` when the server should serve the request.
   */
  onRequest(
    ctx: RequestContext,
    req: IncomingMessage,
    res: ServerResponse,
  ): string | undefined | Promise<string | undefined> {
    const token = bearerToken(req);
    // Only remembered when a rule can ask (a WeakMap entry per request is not free for the GC).
    if (token !== undefined && this.rules.some((r) => r.spec.match?.token !== undefined))
      this.tokens.set(ctx, token);
    const holds: Promise<void>[] = [];
    for (const rule of this.rules) {
      if (rule.spec.type !== 'delayRequests' || !rule.active) continue;
      if (!matchesRequest(rule.spec.match, ctx, ctx.query, token) || !rule.take()) continue;
      holds.push(holdRequest(rule as Rule<DelayRequestsSpec>));
    }
    const answer = (): string | undefined => {
      const a = {
        ctx,
        token,
        res,
        currentRv: () => (typeof this.server.store?.rv === 'number' ? this.server.store.rv : undefined),
        blackhole: (r: ServerResponse) => {
          this.blackholed.add(r);
          r.once('close', () => this.blackholed.delete(r));
        },
      };
      for (const rule of this.rules) if (rule.active && tryAnswer(rule, a)) return rule.id;
      return undefined;
    };
    if (holds.length === 0) return answer();
    return Promise.all(holds).then(answer);
  }

  /** Called by the server when a watch starts; every frame of that watch goes through the returned hooks. */
  onWatchStart(ctx: RequestContext, writer: WatchWriter): WatchFaults {
    const token = this.tokens.get(ctx);
    const matching = this.rules.filter(
      (r) => r.active && matchesRequest(r.spec.match, ctx, ctx.query, token),
    );
    const plan = planWatch(matching, ctx.query.get('sendInitialEvents') === 'true');
    if (isEmptyPlan(plan)) return { deliver: (_event, line) => writer.write(line), close: () => {} };
    return new WatchSession(writer, plan);
  }
}
