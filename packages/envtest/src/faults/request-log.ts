/**
 * The server's request log: one record per request, made when the request arrives, completed as the server
 * learns more (user, classification, status, the fault rule that answered). The fault injector queries this
 * log; it keeps none of its own.
 */
import type { ServerResponse } from 'node:http';
import { matchesRequest } from './match.js';
import type { RequestContext, RequestRecord } from './seam.js';
import type { RequestMatch } from './spec.js';

export type { RequestRecord } from './seam.js';

/** Filter for the request log: a {@link RequestMatch} (its `token` is ignored) plus a time window. */
export interface RequestQuery extends RequestMatch {
  /** Only requests at or after this time (**ms** since the epoch). */
  since?: number;
  /** Only requests before this time (**ms** since the epoch). */
  until?: number;
  /** Only requests answered with this HTTP status. */
  status?: number;
  /** Only requests answered by this rule. */
  faultId?: string;
}

/**
 * @internal A record the server fills in; a class so that every record has one shape (the log is on every
 * request's path).
 */
export class LogRecord implements RequestRecord {
  readonly time = Date.now();
  user = 'system:anonymous';
  verb = 'nonresource';
  group: string | undefined = undefined;
  version: string | undefined = undefined;
  resource: string | undefined = undefined;
  subresource: string | undefined = undefined;
  namespace: string | undefined = undefined;
  name: string | undefined = undefined;
  status: number | undefined = undefined;
  faultId: string | undefined = undefined;
  constructor(
    readonly id: number,
    readonly method: string,
    readonly path: string,
    readonly query: string,
  ) {}

  /** Take the server's classification of the request. */
  classify(ctx: RequestContext): void {
    this.verb = ctx.verb;
    this.group = ctx.group;
    this.version = ctx.version;
    this.resource = ctx.resource;
    this.subresource = ctx.subresource;
    this.namespace = ctx.namespace;
    this.name = ctx.name;
  }

  /** Note the status when `res` starts, whoever writes its head (implicit headers go through writeHead too). */
  track(res: ServerResponse): void {
    const record = this;
    const origWriteHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, code: number, ...rest: unknown[]) {
      record.status = code;
      return (origWriteHead as (...a: unknown[]) => ServerResponse).call(this, code, ...rest);
    } as typeof res.writeHead;
  }
}

/** Records kept at least (oldest dropped first, in batches of a tenth). */
export const REQUEST_LOG_LIMIT = 100_000;

/** Append a record, trimming in batches so a long run costs amortised O(1) per request. */
export function appendRequest(log: RequestRecord[], record: RequestRecord, limit = REQUEST_LOG_LIMIT): void {
  log.push(record);
  if (log.length > limit + Math.ceil(limit / 10)) log.splice(0, log.length - limit);
}

/** The records matching `query` (all when absent), oldest first. */
export function queryRequests(log: readonly RequestRecord[], query: RequestQuery = {}): RequestRecord[] {
  return log.filter(
    (r) =>
      (query.since === undefined || r.time >= query.since) &&
      (query.until === undefined || r.time < query.until) &&
      (query.status === undefined || r.status === query.status) &&
      (query.faultId === undefined || r.faultId === query.faultId) &&
      matchesRequest(query, r, r.query, null),
  );
}
