import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

// ---------------------------------------------------------------------------------------------------------
// The seam with the API server core
// ---------------------------------------------------------------------------------------------------------

/** What the API server knows about one request when it asks the fault injector about it. */
export interface RequestContext {
  readonly id: number;
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  /** get|list|watch|create|update|patch|delete|deletecollection|nonresource */
  readonly verb: string;
  readonly group?: string;
  readonly version?: string;
  readonly resource?: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
}

/** The raw output of one watch response. */
export interface WatchWriter {
  write(chunk: string | Uint8Array): void;
  end(): void;
  destroy(): void;
}

/** Per-watch delivery hooks. */
export interface WatchFaults {
  /** Deliver one event. `line` = the event's JSON + '\n'. Default behaviour: writer.write(line). */
  deliver(event: { type: string; object: unknown }, line: string): void;
  /** Called by the server when the watch ends for any reason; releases timers and drops held events. */
  close(): void;
}

/**
 * What the fault injector needs from the API server. The server core (`ApiServer`) satisfies it
 * structurally; every member is looked up when used, so a server without one of them still works for
 * the faults that do not need it (calling one that is missing throws {@link FaultError} `ENOTSUPPORTED`).
 */
export interface FaultHost {
  readonly store?: {
    /** Forget every resourceVersion older than the current one, as etcd compaction does. */
    compact(...args: never[]): unknown;
    /** Keep at most `n` events in the watch history window. */
    setWatchHistoryLimit(n: number): unknown;
    /** The current resourceVersion (one sequence for the whole store). */
    readonly rv?: number;
  };
  /** Drop every connection; `keepState: false` also empties the store. */
  restart?(options: { keepState: boolean }): unknown;
  /** Number of TCP/TLS connections open on the API port right now. */
  openConnections?(): number;
}

// ---------------------------------------------------------------------------------------------------------
// Rule specs: the typed API and the admin endpoint's JSON share these shapes
// ---------------------------------------------------------------------------------------------------------

/** Every request verb as the server classifies it. */
export const VERBS = [
  'get',
  'list',
  'watch',
  'create',
  'update',
  'patch',
  'delete',
  'deletecollection',
  'nonresource',
] as const;
/** A request verb as the server classifies it. */
export type Verb = (typeof VERBS)[number];

/**
 * Which requests a rule applies to. Every field given must match (AND); an absent field matches anything.
 * String fields compare exactly; array fields match any of their members. All fields are JSON, so the same
 * object can be posted to the admin endpoint.
 */
export interface RequestMatch {
  /** HTTP method(s), upper case (`GET`, `POST`, …). */
  method?: string | string[];
  /** Verb(s) as the server classifies them: `watch` is a GET of a collection with `watch=true`. */
  verb?: Verb | Verb[];
  /** The exact URL path, without the query. */
  path?: string;
  /** A prefix of the URL path. */
  pathPrefix?: string;
  /** A regular expression (JavaScript syntax, as a string) tested against the URL path. */
  pathPattern?: string;
  /** API group; `''` is the core group. */
  group?: string;
  version?: string;
  /** Resource plural, e.g. `pods`. */
  resource?: string | string[];
  /** Subresource, e.g. `status`; `''` matches only requests without one. */
  subresource?: string;
  /** Namespace from the URL; `''` matches only requests without one (cluster-wide or cluster-scoped). */
  namespace?: string;
  /** Object name from the URL. */
  name?: string;
  /** `true`: only requests carrying a `continue` token; `false`: only requests without one. */
  hasContinue?: boolean;
  /** Query parameters that must be present with exactly these (decoded) values. */
  query?: Record<string, string>;
  /**
   * The request's bearer token must equal this (e.g. to fail one client's requests with 401). Never logged;
   * ignored when querying the request log, which holds no tokens.
   */
  token?: string;
}

/** The Status object to answer with; unset fields get the defaults of the HTTP code (see {@link statusFor}). */
export interface StatusSpec {
  /** Status.reason, e.g. `ServiceUnavailable`. */
  reason?: string;
  /** Status.message. */
  message?: string;
  /** Extra Status.details (merged over the defaults). */
  details?: Record<string, unknown>;
}

interface RuleBase {
  /** Which requests or watches the rule applies to; absent = all. */
  match?: RequestMatch;
  /**
   * Act on at most this many requests (request rules), watches (`endWatch`, `shapeWatch`,
   * `suppressInitialEventsEnd`) or events (`delayEvents`), then go inactive. Absent = until cleared.
   */
  times?: number;
}

/**
 * Answer matching requests with an error Status (or an empty body), before the server routes them.
 * `probability` makes it fail only that fraction of matching requests; `seed` makes that choice repeatable.
 */
export interface FailRequestsSpec extends RuleBase, StatusSpec {
  type: 'fail';
  /** HTTP status code, e.g. 500, 503, 429, 410. */
  status: number;
  /**
   * `Retry-After` header value in **seconds** (also `details.retryAfterSeconds`). Defaults to 1 for 429,
   * none otherwise. `null` sends no header even for 429.
   */
  retryAfterSeconds?: number | null;
  /**
   * `'status'` (default): a JSON Status body. `'empty'`: the status line and headers, no body at all
   * (with `status: 200` on a watch this is C02's "200 with an empty body"). `{ raw }`: exactly this text as
   * the body (Content-Type `application/json` unless `headers` says otherwise) — a truncated or malformed
   * list reply, a proxy's HTML page.
   */
  body?: 'status' | 'empty' | { raw: string };
  /** Fraction (0..1] of matching requests that fail; absent = all. */
  probability?: number;
  /** Seed for the `probability` draw (a fixed seed gives the same sequence every run). */
  seed?: number;
  /** Extra response headers. */
  headers?: Record<string, string>;
}

/**
 * Answer matching requests as if their resourceVersion had been compacted away:
 * a list gets HTTP 410 `Expired` ("The resourceVersion for the provided list is too old."), a list with a
 * `continue` token gets HTTP 410 `Expired` with the continue-token message, and a watch gets what a real
 * API server sends: HTTP 200, one `ERROR` event holding a 410 `Expired` Status, then a clean end.
 */
export interface ExpireSpec extends RuleBase {
  type: 'expire';
}

/** End matching watches cleanly (a normal chunked end) after a time and/or after a number of events. */
export interface EndWatchesSpec extends RuleBase {
  type: 'endWatch';
  /** End this many **milliseconds** after the watch started. */
  afterMs?: number;
  /** End right after this many events have been written (every frame counts, bookmarks included). */
  afterEvents?: number;
}

/**
 * Black-hole matching watches (or any request): keep the connection open and never send anything more.
 * With `sendHeaders` (default true) the client first gets `200` and the watch headers, as a stalled watch
 * would; with `false` it never gets a response at all. The socket stays open until the client closes it,
 * the server restarts or stops.
 */
export interface BlackholeSpec extends RuleBase {
  type: 'blackhole';
  sendHeaders?: boolean;
}

/** One step of a watch-shaping script; see {@link ShapeWatchSpec}. */
export type ShapeStep =
  /** Write the next `count` (default 1) frames unchanged. */
  | { op: 'pass'; count?: number }
  /**
   * Write the next frame in `parts` (default 3) writes (= HTTP chunks), waiting `delayMs` (default 0)
   * between them. With `insideUtf8` one cut falls between the bytes of the frame's first multi-byte
   * UTF-8 character (a frame without one is cut evenly).
   */
  | { op: 'split'; parts?: number; delayMs?: number; insideUtf8?: boolean }
  /** Write the next `count` frames together in one write. */
  | { op: 'merge'; count: number }
  /** Write only the first `bytes` (default: half) of the next frame, then end the response (`after`, default `end`). */
  | { op: 'truncate'; bytes?: number; after?: 'end' | 'destroy' }
  /** Write the next frame without its trailing newline, then end the response cleanly. */
  | { op: 'noNewline' }
  /** Write `data` as-is (e.g. an HTML line) without consuming a frame; then go on (`after`: continue), end or destroy. */
  | { op: 'raw'; data: string; after?: 'continue' | 'end' | 'destroy' }
  /** Write a bare Status object (not wrapped in an event) as one line; then go on or end. */
  | { op: 'status'; code?: number; reason?: string; message?: string; after?: 'continue' | 'end' }
  /** Write an `ERROR` event holding a Status (default 410 Expired), then end the response cleanly. */
  | { op: 'error'; code?: number; reason?: string; message?: string }
  /** Wait this many **milliseconds** before the next step. */
  | { op: 'delay'; ms: number }
  /** End the response cleanly now. */
  | { op: 'end' }
  /** Destroy the connection now (no chunked terminator: the client sees a broken stream). */
  | { op: 'destroy' };

/**
 * Shape the bytes of matching watches: the steps run in order over the frames the server delivers (every
 * frame counts, bookmarks included); once the steps are used up frames pass unchanged. Steps that consume
 * no frame (`raw`, `status`, `error`, `delay`, `end`, `destroy`) at the head of the script run as soon as
 * the watch starts.
 */
export interface ShapeWatchSpec extends RuleBase {
  type: 'shapeWatch';
  steps: ShapeStep[];
}

/**
 * Delay delivery of watch events about one object (by namespace and name) by `delayMs` **milliseconds**.
 *
 * `order: 'stream'` (default) holds the whole stream behind the delayed event, as a lagging watch cache
 * would: every watch still sees events in resourceVersion order, later events (and bookmarks) wait.
 * `order: 'object'` holds only that object's events; other objects' events overtake them, so the stream is
 * no longer in resourceVersion order (per-object order is kept), and bookmarks are dropped while an event is
 * held so that no bookmark claims an RV whose event was not yet sent.
 *
 * Either way, events still held when the watch ends are dropped; a client that re-watches from its last
 * resourceVersion gets them replayed from the history.
 */
export interface DelayEventsSpec extends RuleBase {
  type: 'delayEvents';
  /** Object namespace; absent matches any (use for cluster-scoped objects). */
  namespace?: string;
  /** The object's name. Give exactly one of `name` and `namePrefix`. */
  name?: string;
  /** Matches every object whose name starts with this (objects made with `generateName`). */
  namePrefix?: string;
  delayMs: number;
  /** Event types to delay; absent = ADDED, MODIFIED and DELETED. */
  eventTypes?: string[];
  order?: 'stream' | 'object';
}

/**
 * Suppress the `BOOKMARK` carrying the `k8s.io/initial-events-end` annotation on matching streaming-list
 * watches (`sendInitialEvents=true`): the initial ADDED events are sent, the end marker never (C04).
 */
export interface SuppressInitialEventsEndSpec extends RuleBase {
  type: 'suppressInitialEventsEnd';
}

/**
 * Answer matching requests with 403 Forbidden unless their query carries exactly this field selector
 * and/or label selector (compared after URL decoding, byte for byte). With `token`, the rule applies only
 * to requests whose bearer token equals it. Defaults to `verb: ['list', 'watch']` when `match.verb` is unset.
 */
export interface RequireSelectorSpec extends RuleBase {
  type: 'requireSelector';
  fieldSelector?: string;
  labelSelector?: string;
  token?: string;
}

/**
 * Hold matching requests before the server handles them ("slow replies"). With `barrier: n`, each held
 * request waits until `n` matching requests are waiting and then all are let through together (a race on
 * purpose, e.g. two writers at the same moment, C20); `delayMs` then caps the wait. Without `barrier`,
 * each request is held `delayMs`. The request is then served normally (other rules still apply).
 */
export interface DelayRequestsSpec extends RuleBase {
  type: 'delayRequests';
  /** **Milliseconds** to hold each request (with `barrier`: the longest wait; default 10,000). */
  delayMs?: number;
  barrier?: number;
}

/** Every fault rule, as a JSON-able object (the admin endpoint's `POST /faults` body). */
export type FaultSpec =
  | DelayRequestsSpec
  | FailRequestsSpec
  | ExpireSpec
  | EndWatchesSpec
  | BlackholeSpec
  | ShapeWatchSpec
  | DelayEventsSpec
  | SuppressInitialEventsEndSpec
  | RequireSelectorSpec;

/** A live rule. */
export interface FaultHandle {
  readonly id: string;
  readonly spec: Readonly<FaultSpec>;
  /** How many requests or watches the rule has acted on. */
  readonly hits: number;
  /** False once cleared or once `times` is used up. */
  readonly active: boolean;
  /** Remove the rule; requests and watches already affected keep their fate. */
  clear(): void;
}

/** One entry of the fault injector's request log. */
export interface RequestRecord {
  readonly id: number;
  /** Wall clock, **milliseconds** since the epoch, when the request reached the fault injector. */
  readonly time: number;
  readonly method: string;
  readonly path: string;
  /** The raw query string, without `?`. */
  readonly query: string;
  readonly verb: string;
  readonly group?: string;
  readonly version?: string;
  readonly resource?: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  /** HTTP status sent, once the response has started (`undefined` while pending or if none was sent). */
  status?: number;
  /** The rule that answered this request, if any. */
  faultId?: string;
}

/** Filter for {@link FaultInjector.requests}: a {@link RequestMatch} plus a time window. */
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

/** Errors from the fault-injection API. `code` is stable. */
export class FaultError extends Error {
  readonly code: 'EINVALID' | 'ENOTSUPPORTED';
  constructor(code: 'EINVALID' | 'ENOTSUPPORTED', message: string) {
    super(message);
    this.name = 'FaultError';
    this.code = code;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------------

const DEFAULT_REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

const DEFAULT_MESSAGES: Record<number, string> = {
  403: 'forbidden by an injected fault',
  410: 'the requested resource version is too old (injected fault)',
  429: 'Too many requests, please try again later.',
  500: 'Internal error occurred: injected fault',
  503: 'the server is currently unable to handle the request',
  504: 'the server was unable to return a response in the time allotted',
};

const LIST_EXPIRED_MESSAGE = 'The resourceVersion for the provided list is too old.';
const CONTINUE_EXPIRED_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.';
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/**
 * A `meta/v1` Status object for an HTTP code, with Kubernetes' key order
 * (kind, apiVersion, metadata, status, message, reason, details, code). Unset reason/message default to the
 * code's usual ones (e.g. 503 → `ServiceUnavailable`).
 */
export function statusFor(code: number, spec: StatusSpec = {}): Record<string, unknown> {
  const status: Record<string, unknown> = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: code >= 200 && code < 300 ? 'Success' : 'Failure',
    message: spec.message ?? DEFAULT_MESSAGES[code] ?? `injected fault (HTTP ${code})`,
  };
  const reason = spec.reason ?? DEFAULT_REASONS[code];
  if (reason !== undefined) status.reason = reason;
  if (spec.details !== undefined && Object.keys(spec.details).length > 0) status.details = spec.details;
  status.code = code;
  return status;
}

/** mulberry32: a small seeded PRNG so that a probability rule can be replayed exactly. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function oneOf<T>(want: T | T[] | undefined, got: T | undefined): boolean {
  if (want === undefined) return true;
  if (Array.isArray(want)) return got !== undefined && want.includes(got);
  return want === got;
}

const patternCache = new Map<string, RegExp>();
function pattern(source: string): RegExp {
  let re = patternCache.get(source);
  if (re === undefined) {
    re = new RegExp(source);
    patternCache.set(source, re);
  }
  return re;
}

interface Matchable {
  method: string;
  path: string;
  verb: string;
  group?: string | undefined;
  version?: string | undefined;
  resource?: string | undefined;
  subresource?: string | undefined;
  namespace?: string | undefined;
  name?: string | undefined;
}

/** Whether a request (context or log record) satisfies a {@link RequestMatch}. */
export function matchesRequest(
  m: RequestMatch | undefined,
  r: Matchable,
  query: URLSearchParams | string,
  token?: string | null,
): boolean {
  if (m === undefined) return true;
  // `null` = the caller has no tokens (the request log): the token field is ignored there.
  if (m.token !== undefined && token !== null && m.token !== token) return false;
  if (m.method !== undefined && !oneOf(asUpper(m.method), r.method.toUpperCase())) return false;
  if (!oneOf<string>(m.verb, r.verb)) return false;
  if (m.path !== undefined && m.path !== r.path) return false;
  if (m.pathPrefix !== undefined && !r.path.startsWith(m.pathPrefix)) return false;
  if (m.pathPattern !== undefined && !pattern(m.pathPattern).test(r.path)) return false;
  if (m.group !== undefined && m.group !== (r.group ?? '')) return false;
  if (m.version !== undefined && m.version !== r.version) return false;
  if (!oneOf(m.resource, r.resource)) return false;
  if (m.subresource !== undefined && m.subresource !== (r.subresource ?? '')) return false;
  if (m.namespace !== undefined && m.namespace !== (r.namespace ?? '')) return false;
  if (m.name !== undefined && m.name !== r.name) return false;
  if (m.hasContinue !== undefined || m.query !== undefined) {
    const q = typeof query === 'string' ? new URLSearchParams(query) : query;
    if (m.hasContinue !== undefined && m.hasContinue !== Boolean(q.get('continue'))) return false;
    if (m.query !== undefined) {
      for (const [k, v] of Object.entries(m.query)) if (q.get(k) !== v) return false;
    }
  }
  return true;
}

function asUpper(m: string | string[]): string | string[] {
  return Array.isArray(m) ? m.map((s) => s.toUpperCase()) : m.toUpperCase();
}

function isNonNegativeInt(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 0;
}

function isPositiveInt(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n > 0;
}

function invalid(message: string): never {
  throw new FaultError('EINVALID', message);
}

/**
 * Check a rule spec (e.g. one that arrived as JSON) and return it typed.
 * @throws FaultError `EINVALID` naming the first bad field.
 */
export function validateFaultSpec(input: unknown): FaultSpec {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    invalid('a fault rule must be an object');
  const spec = input as Record<string, unknown>;
  if (spec.times !== undefined && !isPositiveInt(spec.times)) invalid('times must be a positive integer');
  if (spec.match !== undefined) validateMatch(spec.match);
  switch (spec.type) {
    case 'fail': {
      if (
        typeof spec.status !== 'number' ||
        !Number.isInteger(spec.status) ||
        spec.status < 100 ||
        spec.status > 599
      )
        invalid('fail.status must be an HTTP status code');
      if (
        spec.retryAfterSeconds !== undefined &&
        spec.retryAfterSeconds !== null &&
        !isNonNegativeInt(spec.retryAfterSeconds)
      )
        invalid('fail.retryAfterSeconds must be a non-negative integer (seconds) or null');
      if (
        spec.body !== undefined &&
        spec.body !== 'status' &&
        spec.body !== 'empty' &&
        !(
          typeof spec.body === 'object' &&
          spec.body !== null &&
          typeof (spec.body as { raw?: unknown }).raw === 'string'
        )
      )
        invalid('fail.body must be "status", "empty" or {"raw": "<text>"}');
      if (
        spec.probability !== undefined &&
        (typeof spec.probability !== 'number' || !(spec.probability > 0) || spec.probability > 1)
      )
        invalid('fail.probability must be in (0, 1]');
      if (spec.seed !== undefined && !isNonNegativeInt(spec.seed))
        invalid('fail.seed must be a non-negative integer');
      if (spec.headers !== undefined && !isStringRecord(spec.headers))
        invalid('fail.headers must map strings to strings');
      if (spec.reason !== undefined && typeof spec.reason !== 'string')
        invalid('fail.reason must be a string');
      if (spec.message !== undefined && typeof spec.message !== 'string')
        invalid('fail.message must be a string');
      break;
    }
    case 'expire':
    case 'suppressInitialEventsEnd':
      break;
    case 'delayRequests':
      if (spec.delayMs === undefined && spec.barrier === undefined)
        invalid('delayRequests needs delayMs and/or barrier');
      if (spec.delayMs !== undefined && !isNonNegativeInt(spec.delayMs))
        invalid('delayRequests.delayMs must be a non-negative integer (milliseconds)');
      if (spec.barrier !== undefined && (!isPositiveInt(spec.barrier) || spec.barrier < 2))
        invalid('delayRequests.barrier must be an integer ≥ 2');
      break;
    case 'endWatch':
      if (spec.afterMs === undefined && spec.afterEvents === undefined)
        invalid('endWatch needs afterMs and/or afterEvents');
      if (spec.afterMs !== undefined && !isNonNegativeInt(spec.afterMs))
        invalid('endWatch.afterMs must be a non-negative integer (milliseconds)');
      if (spec.afterEvents !== undefined && !isPositiveInt(spec.afterEvents))
        invalid('endWatch.afterEvents must be a positive integer');
      break;
    case 'blackhole':
      if (spec.sendHeaders !== undefined && typeof spec.sendHeaders !== 'boolean')
        invalid('blackhole.sendHeaders must be a boolean');
      break;
    case 'shapeWatch':
      if (!Array.isArray(spec.steps) || spec.steps.length === 0)
        invalid('shapeWatch.steps must be a non-empty array');
      spec.steps.forEach(validateStep);
      break;
    case 'delayEvents':
      if ((spec.name === undefined) === (spec.namePrefix === undefined))
        invalid('delayEvents needs exactly one of name and namePrefix');
      for (const k of ['name', 'namePrefix'] as const)
        if (spec[k] !== undefined && (typeof spec[k] !== 'string' || spec[k] === ''))
          invalid(`delayEvents.${k} must be a non-empty string`);
      if (spec.namespace !== undefined && typeof spec.namespace !== 'string')
        invalid('delayEvents.namespace must be a string');
      if (!isNonNegativeInt(spec.delayMs))
        invalid('delayEvents.delayMs must be a non-negative integer (milliseconds)');
      if (spec.order !== undefined && spec.order !== 'stream' && spec.order !== 'object')
        invalid('delayEvents.order must be "stream" or "object"');
      if (spec.eventTypes !== undefined && !isStringArray(spec.eventTypes))
        invalid('delayEvents.eventTypes must be an array of strings');
      break;
    case 'requireSelector':
      if (spec.fieldSelector === undefined && spec.labelSelector === undefined)
        invalid('requireSelector needs fieldSelector and/or labelSelector');
      for (const k of ['fieldSelector', 'labelSelector', 'token'] as const)
        if (spec[k] !== undefined && typeof spec[k] !== 'string')
          invalid(`requireSelector.${k} must be a string`);
      break;
    default:
      invalid(`unknown fault type ${JSON.stringify(spec.type)}`);
  }
  return spec as unknown as FaultSpec;
}

function isStringRecord(v: unknown): v is Record<string, string> {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    Object.values(v).every((x) => typeof x === 'string')
  );
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string');
}

function validateMatch(m: unknown): void {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) invalid('match must be an object');
  const r = m as Record<string, unknown>;
  const stringOrList = ['method', 'verb', 'resource'];
  const strings = [
    'path',
    'pathPrefix',
    'pathPattern',
    'group',
    'version',
    'subresource',
    'namespace',
    'name',
    'token',
  ];
  for (const [k, v] of Object.entries(r)) {
    if (stringOrList.includes(k)) {
      if (typeof v !== 'string' && !isStringArray(v))
        invalid(`match.${k} must be a string or an array of strings`);
      // A misspelt verb would make a rule that silently never matches.
      const unknown =
        k === 'verb' ? [v].flat().find((x) => !(VERBS as readonly string[]).includes(x)) : undefined;
      if (unknown !== undefined)
        invalid(`match.verb ${JSON.stringify(unknown)} is not one of ${VERBS.join('|')}`);
    } else if (strings.includes(k)) {
      if (typeof v !== 'string') invalid(`match.${k} must be a string`);
    } else if (k === 'hasContinue') {
      if (typeof v !== 'boolean') invalid('match.hasContinue must be a boolean');
    } else if (k === 'query') {
      if (!isStringRecord(v)) invalid('match.query must map strings to strings');
    } else {
      invalid(`unknown match field ${JSON.stringify(k)}`);
    }
  }
  if (typeof r.pathPattern === 'string') {
    try {
      new RegExp(r.pathPattern);
    } catch {
      invalid('match.pathPattern is not a valid regular expression');
    }
  }
}

function validateStep(step: unknown, i: number): void {
  if (typeof step !== 'object' || step === null) invalid(`shapeWatch.steps[${i}] must be an object`);
  const s = step as Record<string, unknown>;
  const at = `shapeWatch.steps[${i}]`;
  switch (s.op) {
    case 'pass':
      if (s.count !== undefined && !isPositiveInt(s.count)) invalid(`${at}.count must be a positive integer`);
      break;
    case 'split':
      if (s.parts !== undefined && (!isPositiveInt(s.parts) || s.parts < 2))
        invalid(`${at}.parts must be an integer ≥ 2`);
      if (s.delayMs !== undefined && !isNonNegativeInt(s.delayMs))
        invalid(`${at}.delayMs must be a non-negative integer`);
      if (s.insideUtf8 !== undefined && typeof s.insideUtf8 !== 'boolean')
        invalid(`${at}.insideUtf8 must be a boolean`);
      break;
    case 'merge':
      if (!isPositiveInt(s.count) || s.count < 2) invalid(`${at}.count must be an integer ≥ 2`);
      break;
    case 'truncate':
      if (s.bytes !== undefined && !isPositiveInt(s.bytes)) invalid(`${at}.bytes must be a positive integer`);
      if (s.after !== undefined && s.after !== 'end' && s.after !== 'destroy')
        invalid(`${at}.after must be "end" or "destroy"`);
      break;
    case 'noNewline':
    case 'end':
    case 'destroy':
      break;
    case 'raw':
      if (typeof s.data !== 'string') invalid(`${at}.data must be a string`);
      if (s.after !== undefined && !['continue', 'end', 'destroy'].includes(s.after as string))
        invalid(`${at}.after must be "continue", "end" or "destroy"`);
      break;
    case 'status':
    case 'error':
      if (s.code !== undefined && (!isPositiveInt(s.code) || s.code > 599))
        invalid(`${at}.code must be an HTTP status`);
      if (s.after !== undefined && !['continue', 'end'].includes(s.after as string))
        invalid(`${at}.after must be "continue" or "end"`);
      break;
    case 'delay':
      if (!isNonNegativeInt(s.ms)) invalid(`${at}.ms must be a non-negative integer (milliseconds)`);
      break;
    default:
      invalid(`${at}.op ${JSON.stringify(s.op)} is unknown`);
  }
}

function bearerToken(req: IncomingMessage | undefined): string | undefined {
  const h = req?.headers?.authorization;
  if (typeof h !== 'string') return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(h.trim());
  return m?.[1];
}

// ---------------------------------------------------------------------------------------------------------
// Rules
// ---------------------------------------------------------------------------------------------------------

class Rule implements FaultHandle {
  hits = 0;
  cleared = false;
  /** delayRequests with a barrier: the requests waiting now. */
  waiting: Array<() => void> = [];
  readonly random: (() => number) | undefined;
  constructor(
    readonly id: string,
    readonly spec: FaultSpec,
    private readonly owner: FaultInjector,
  ) {
    if (spec.type === 'fail' && spec.probability !== undefined && spec.probability < 1) {
      this.random = spec.seed !== undefined ? seededRandom(spec.seed) : Math.random;
    }
  }
  get active(): boolean {
    return !this.cleared && (this.spec.times === undefined || this.hits < this.spec.times);
  }
  /** Count one use. Returns false (and counts nothing) when the rule is no longer active. */
  take(): boolean {
    if (!this.active) return false;
    this.hits++;
    return true;
  }
  clear(): void {
    if (this.cleared) return;
    this.cleared = true;
    for (const release of this.waiting.splice(0)) release();
    this.owner.forget(this);
  }
  toJSON(): Record<string, unknown> {
    return { id: this.id, spec: this.spec, hits: this.hits, active: this.active };
  }
}

// ---------------------------------------------------------------------------------------------------------
// Per-watch delivery
// ---------------------------------------------------------------------------------------------------------

type Op =
  | { k: 'write'; data: string | Uint8Array }
  | { k: 'until'; at: number }
  | { k: 'end' }
  | { k: 'destroy' };

interface WatchPlan {
  end?: Rule & { spec: EndWatchesSpec };
  shape?: Rule & { spec: ShapeWatchSpec };
  delays: Array<Rule & { spec: DelayEventsSpec }>;
  suppressEnd?: Rule;
}

interface HeldEvent {
  at: number;
  line: string;
}

/** One watch's delivery pipeline: an ordered queue of writes and waits in front of the writer. */
class WatchSession implements WatchFaults {
  private readonly ops: Op[] = [];
  private timer: NodeJS.Timeout | undefined;
  private endTimer: NodeJS.Timeout | undefined;
  private finished = false; // end/destroy queued or done: no more input accepted
  private closed = false; // writer ended/destroyed or server closed the watch
  private frames = 0;
  private stepIndex = 0;
  private stepUsed = 0;
  private mergeBuffer: string[] = [];
  /** order:'object' holds, per namespace/name. */
  private readonly held = new Map<string, HeldEvent[]>();
  private heldTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly writer: WatchWriter,
    private readonly plan: WatchPlan,
  ) {
    const afterMs = plan.end?.spec.afterMs;
    if (afterMs !== undefined) {
      this.endTimer = setTimeout(() => this.finish('end'), afterMs);
    }
    // Steps that consume no frame run at once (after the server's own synchronous start-up).
    queueMicrotask(() => this.runZeroSteps());
  }

  deliver(event: { type: string; object: unknown }, line: string): void {
    if (this.finished || this.closed) return;
    try {
      this.accept(event, line);
    } catch {
      // Never throw into the server's fan-out: a fault that cannot be applied degrades to a plain write.
      if (!this.closed) this.writer.write(line);
    }
  }

  private accept(event: { type: string; object: unknown }, line: string): void {
    if (this.plan.suppressEnd !== undefined && isInitialEventsEnd(event)) {
      return;
    }
    const now = Date.now();
    const objectKey = keyOf(event.object);
    let release: number | undefined;
    let objectOrder = false;
    for (const d of this.plan.delays) {
      if (!objectMatches(d.spec, event) || !d.take()) continue;
      const at = now + d.spec.delayMs;
      release = release === undefined ? at : Math.max(release, at);
      if (d.spec.order === 'object') objectOrder = true;
    }
    if (release !== undefined && objectOrder && objectKey !== undefined) {
      this.holdForObject(objectKey, { at: release, line });
      return;
    }
    if (this.held.size > 0 && event.type === 'BOOKMARK') return; // never let a bookmark overtake a held event
    if (objectKey !== undefined && this.held.has(objectKey)) {
      // Later events about an object with held events wait behind them (per-object order).
      this.holdForObject(objectKey, { at: 0, line });
      return;
    }
    if (release !== undefined) this.push({ k: 'until', at: release });
    this.frame(line);
  }

  close(): void {
    this.closed = true;
    this.ops.length = 0;
    this.held.clear();
    this.mergeBuffer = [];
    if (this.timer) clearTimeout(this.timer);
    if (this.endTimer) clearTimeout(this.endTimer);
    if (this.heldTimer) clearTimeout(this.heldTimer);
  }

  /** One frame (in stream order) through the shaping script and the end-after-N-events counter. */
  private frame(line: string): void {
    this.shapeFrame(line);
    this.frames++;
    const n = this.plan.end?.spec.afterEvents;
    if (n !== undefined && this.frames >= n) this.finish('end');
  }

  private shapeFrame(line: string): void {
    const steps = this.plan.shape?.spec.steps;
    const step = steps?.[this.stepIndex];
    if (step === undefined) {
      this.push({ k: 'write', data: line });
      return;
    }
    switch (step.op) {
      case 'pass':
        this.push({ k: 'write', data: line });
        if (++this.stepUsed >= (step.count ?? 1)) this.nextStep();
        break;
      case 'split': {
        const bytes = Buffer.from(line, 'utf8');
        // A frame without a multi-byte character is cut evenly instead (documented on the step).
        const utf8 = (step.insideUtf8 ?? false) && bytes.some((b) => b >= 0xc0);
        const cuts = splitPoints(bytes, step.parts ?? 3, utf8);
        let from = 0;
        cuts.push(bytes.length);
        cuts.forEach((to, i) => {
          if (i > 0 && (step.delayMs ?? 0) > 0) this.push({ k: 'until', at: -(step.delayMs ?? 0) });
          this.push({ k: 'write', data: bytes.subarray(from, to) });
          from = to;
        });
        this.nextStep();
        break;
      }
      case 'merge':
        this.mergeBuffer.push(line);
        if (this.mergeBuffer.length >= step.count) {
          this.push({ k: 'write', data: this.mergeBuffer.join('') });
          this.mergeBuffer = [];
          this.nextStep();
        }
        break;
      case 'truncate': {
        const bytes = Buffer.from(line, 'utf8');
        const n = Math.min(step.bytes ?? Math.floor(bytes.length / 2), bytes.length - 1);
        this.push({ k: 'write', data: bytes.subarray(0, Math.max(1, n)) });
        this.nextStep();
        this.finish(step.after ?? 'end');
        break;
      }
      case 'noNewline':
        this.push({ k: 'write', data: line.endsWith('\n') ? line.slice(0, -1) : line });
        this.nextStep();
        this.finish('end');
        break;
      default:
        // A zero-frame step is at the head: run it, then shape this frame with what follows.
        this.runZeroSteps();
        if (!this.finished) this.shapeFrame(line);
    }
  }

  private nextStep(): void {
    this.stepIndex++;
    this.stepUsed = 0;
    this.runZeroSteps();
  }

  /** Run the steps at the head of the script that consume no frame. */
  private runZeroSteps(): void {
    const steps = this.plan.shape?.spec.steps;
    if (steps === undefined) return;
    while (!this.finished && !this.closed) {
      const step = steps[this.stepIndex];
      if (step === undefined) return;
      switch (step.op) {
        case 'raw':
          this.push({ k: 'write', data: step.data });
          this.stepIndex++;
          if (step.after === 'end' || step.after === 'destroy') this.finish(step.after);
          break;
        case 'status':
          this.push({
            k: 'write',
            data: `${JSON.stringify(statusFor(step.code ?? 500, { ...pick(step) }))}\n`,
          });
          this.stepIndex++;
          if (step.after === 'end') this.finish('end');
          break;
        case 'error': {
          const status = statusFor(step.code ?? 410, { ...pick(step) });
          this.push({ k: 'write', data: `${JSON.stringify({ type: 'ERROR', object: status })}\n` });
          this.stepIndex++;
          this.finish('end');
          break;
        }
        case 'delay':
          this.push({ k: 'until', at: -step.ms });
          this.stepIndex++;
          break;
        case 'end':
        case 'destroy':
          this.stepIndex++;
          this.finish(step.op);
          break;
        default:
          return;
      }
    }
  }

  private finish(how: 'end' | 'destroy'): void {
    if (this.finished || this.closed) return;
    this.finished = true;
    if (this.endTimer) clearTimeout(this.endTimer);
    this.push({ k: how });
  }

  private holdForObject(key: string, ev: HeldEvent): void {
    const list = this.held.get(key);
    if (list) list.push(ev);
    else this.held.set(key, [ev]);
    this.scheduleHeld();
  }

  private scheduleHeld(): void {
    if (this.heldTimer) clearTimeout(this.heldTimer);
    this.heldTimer = undefined;
    let next = Number.POSITIVE_INFINITY;
    for (const list of this.held.values()) next = Math.min(next, list[0]?.at ?? next);
    if (next === Number.POSITIVE_INFINITY) return;
    this.heldTimer = setTimeout(() => this.releaseHeld(), Math.max(0, next - Date.now()));
  }

  private releaseHeld(): void {
    if (this.closed || this.finished) return;
    const now = Date.now();
    for (const [key, list] of this.held) {
      while (list.length > 0 && (list[0]?.at ?? 0) <= now) {
        const ev = list.shift()!;
        this.frame(ev.line);
        if (this.finished) return;
      }
      if (list.length === 0) this.held.delete(key);
    }
    this.scheduleHeld();
  }

  private push(op: Op): void {
    // A negative `at` is a relative wait, resolved when the wait reaches the head of the queue.
    this.ops.push(op);
    if (this.timer === undefined) this.pump();
  }

  private pump(): void {
    this.timer = undefined;
    while (!this.closed) {
      const op = this.ops[0];
      if (op === undefined) return;
      if (op.k === 'until') {
        if (op.at < 0) op.at = Date.now() - op.at;
        const wait = op.at - Date.now();
        if (wait > 0) {
          this.timer = setTimeout(() => this.pump(), wait);
          return;
        }
        this.ops.shift();
        continue;
      }
      this.ops.shift();
      try {
        if (op.k === 'write') this.writer.write(op.data);
        else if (op.k === 'end') {
          this.closed = true;
          this.writer.end();
        } else {
          this.closed = true;
          this.writer.destroy();
        }
      } catch {
        this.closed = true;
      }
    }
  }
}

function pick(s: { reason?: string; message?: string }): StatusSpec {
  const out: StatusSpec = {};
  if (s.reason !== undefined) out.reason = s.reason;
  if (s.message !== undefined) out.message = s.message;
  return out;
}

/** Byte offsets at which to cut a frame into `parts` pieces; with `insideUtf8` the first cut splits a character. */
export function splitPoints(bytes: Uint8Array, parts: number, insideUtf8: boolean): number[] {
  const n = bytes.length;
  const cuts: number[] = [];
  if (insideUtf8) {
    const lead = bytes.findIndex((b) => b >= 0xc0);
    if (lead < 0)
      throw new FaultError('EINVALID', 'split insideUtf8: the frame has no multi-byte UTF-8 character');
    cuts.push(lead + 1);
  }
  const want = Math.max(0, Math.min(parts - 1, n - 1));
  for (let i = 1; cuts.length < want && i <= want; i++) {
    const c = Math.floor((n * i) / parts);
    if (c > 0 && c < n && !cuts.includes(c)) cuts.push(c);
  }
  // Fill up if even cuts collided with the UTF-8 cut.
  for (let c = 1; cuts.length < want && c < n; c++) if (!cuts.includes(c)) cuts.push(c);
  return cuts.sort((a, b) => a - b);
}

function keyOf(object: unknown): string | undefined {
  const md = (object as { metadata?: { namespace?: unknown; name?: unknown } } | null)?.metadata;
  if (md === undefined || typeof md.name !== 'string') return undefined;
  return `${typeof md.namespace === 'string' ? md.namespace : ''}/${md.name}`;
}

const DEFAULT_DELAYED = ['ADDED', 'MODIFIED', 'DELETED'];

function objectMatches(spec: DelayEventsSpec, event: { type: string; object: unknown }): boolean {
  if (!(spec.eventTypes ?? DEFAULT_DELAYED).includes(event.type)) return false;
  const md = (event.object as { metadata?: { namespace?: unknown; name?: unknown } } | null)?.metadata;
  const name = md?.name;
  if (typeof name !== 'string') return false;
  if (spec.name !== undefined ? name !== spec.name : !name.startsWith(spec.namePrefix ?? '')) return false;
  return spec.namespace === undefined || spec.namespace === (md?.namespace ?? '');
}

function isInitialEventsEnd(event: { type: string; object: unknown }): boolean {
  if (event.type !== 'BOOKMARK') return false;
  const ann = (event.object as { metadata?: { annotations?: Record<string, unknown> } } | null)?.metadata
    ?.annotations;
  return ann?.[INITIAL_EVENTS_END] === 'true';
}

/** A request log entry; a class so that every entry has one shape (the log is on every request's path). */
class LogRecord implements RequestRecord {
  readonly id: number;
  readonly time = Date.now();
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly verb: string;
  readonly group: string | undefined;
  readonly version: string | undefined;
  readonly resource: string | undefined;
  readonly subresource: string | undefined;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  status: number | undefined = undefined;
  faultId: string | undefined = undefined;
  constructor(ctx: RequestContext) {
    this.id = ctx.id;
    this.method = ctx.method;
    this.path = ctx.path;
    this.query = ctx.query.size === 0 ? '' : ctx.query.toString();
    this.verb = ctx.verb;
    this.group = ctx.group;
    this.version = ctx.version;
    this.resource = ctx.resource;
    this.subresource = ctx.subresource;
    this.namespace = ctx.namespace;
    this.name = ctx.name;
  }
}

// ---------------------------------------------------------------------------------------------------------
// The injector
// ---------------------------------------------------------------------------------------------------------

/** Options of {@link FaultInjector}. */
export interface FaultInjectorOptions {
  /** How many requests the request log keeps at least (oldest dropped first, in batches). Default 20,000. */
  requestLogLimit?: number;
}

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
 * core. Every request the server hands over is logged; {@link FaultInjector.requests} queries the log.
 */
export class FaultInjector {
  private readonly rules: Rule[] = [];
  private nextId = 1;
  private readonly log: LogRecord[] = [];
  private readonly logLimit: number;
  private readonly blackholed = new Set<ServerResponse>();
  /** Bearer token per request, so watch rules can match on it (never logged). */
  private readonly tokens = new WeakMap<RequestContext, string | undefined>();

  constructor(
    private readonly server: FaultHost | unknown,
    options: FaultInjectorOptions = {},
  ) {
    this.logLimit = options.requestLogLimit ?? 20_000;
  }

  // ------------------------------------------------------------------ rules

  /**
   * Add a rule.
   * @throws FaultError `EINVALID` if the spec is malformed (the message names the field).
   */
  add(spec: FaultSpec): FaultHandle {
    const checked = validateFaultSpec(structuredClone(spec));
    const rule = new Rule(`f${this.nextId++}`, checked, this);
    this.rules.push(rule);
    return rule;
  }

  /** Fail matching requests with a status (500, 503, 429 + `Retry-After`, …) or an empty body. */
  failRequests(spec: Omit<FailRequestsSpec, 'type'>): FaultHandle {
    return this.add({ ...spec, type: 'fail' });
  }

  /** Answer matching lists, continues and watches with 410 Expired, as after a compaction (C03). */
  expire(spec: Omit<ExpireSpec, 'type'> = {}): FaultHandle {
    return this.add({ ...spec, type: 'expire' });
  }

  /** End matching watches cleanly after `afterMs` milliseconds and/or `afterEvents` events (C01, C11). */
  endWatches(spec: Omit<EndWatchesSpec, 'type'>): FaultHandle {
    return this.add({ ...spec, type: 'endWatch' });
  }

  /** Keep matching connections open and send nothing. */
  blackhole(spec: Omit<BlackholeSpec, 'type'> = {}): FaultHandle {
    return this.add({ ...spec, type: 'blackhole' });
  }

  /** Shape the bytes of matching watches (split, merge, truncate, raw lines, bare Status…) (C09, C10). */
  shapeWatch(spec: Omit<ShapeWatchSpec, 'type'>): FaultHandle {
    return this.add({ ...spec, type: 'shapeWatch' });
  }

  /** Delay watch events about one object (C08). */
  delayEvents(spec: Omit<DelayEventsSpec, 'type'>): FaultHandle {
    return this.add({ ...spec, type: 'delayEvents' });
  }

  /** Never send the `k8s.io/initial-events-end` bookmark on matching streaming-list watches (C04). */
  suppressInitialEventsEnd(spec: Omit<SuppressInitialEventsEndSpec, 'type'> = {}): FaultHandle {
    return this.add({ ...spec, type: 'suppressInitialEventsEnd' });
  }

  /** Answer 403 unless matching requests carry the given selectors (C19). */
  requireSelector(spec: Omit<RequireSelectorSpec, 'type'>): FaultHandle {
    return this.add({ ...spec, type: 'requireSelector' });
  }

  /** Hold matching requests `delayMs` ms, or until `barrier` of them wait and then release them together (C20). */
  delayRequests(spec: Omit<DelayRequestsSpec, 'type'>): FaultHandle {
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

  /** @internal */
  forget(rule: Rule): void {
    const i = this.rules.indexOf(rule);
    if (i >= 0) this.rules.splice(i, 1);
  }

  // ------------------------------------------------------------------ server operations

  private host(): FaultHost {
    return (this.server ?? {}) as FaultHost;
  }

  /**
   * Compact the store now, as etcd does: older resourceVersions then give 410 Expired to exact lists and
   * continue tokens, and to watches from before the compaction (C03, C05). Returns the resourceVersion
   * compacted at (when the server reports it).
   * @throws FaultError `ENOTSUPPORTED` if the server has no store compaction.
   */
  compact(): { resourceVersion?: string } {
    const store = this.host().store;
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
    if (!isNonNegativeInt(n))
      throw new FaultError('EINVALID', 'watch history limit must be a non-negative integer');
    const store = this.host().store;
    if (typeof store?.setWatchHistoryLimit !== 'function')
      throw new FaultError('ENOTSUPPORTED', 'the server has no setWatchHistoryLimit()');
    store.setWatchHistoryLimit(n);
  }

  /**
   * Restart the server: drop every connection (black-holed ones included); `keepState: false` also loses
   * every object. Resolves when the server answers again.
   * @throws FaultError `ENOTSUPPORTED` without server support.
   */
  async restart(options: { keepState: boolean } = { keepState: true }): Promise<void> {
    const host = this.host();
    if (typeof host.restart !== 'function')
      throw new FaultError('ENOTSUPPORTED', 'the server has no restart()');
    this.releaseBlackholes(true);
    await host.restart({ keepState: options.keepState });
  }

  /**
   * Open TCP connections on the API port right now (C11).
   * @throws FaultError `ENOTSUPPORTED` without server support.
   */
  openConnections(): number {
    const host = this.host();
    if (typeof host.openConnections !== 'function')
      throw new FaultError('ENOTSUPPORTED', 'the server cannot count connections');
    return host.openConnections();
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

  // ------------------------------------------------------------------ request log

  /** Logged requests matching `query` (all when absent), oldest first. */
  requests(query: RequestQuery = {}): RequestRecord[] {
    return this.log.filter(
      (r) =>
        (query.since === undefined || r.time >= query.since) &&
        (query.until === undefined || r.time < query.until) &&
        (query.status === undefined || r.status === query.status) &&
        (query.faultId === undefined || r.faultId === query.faultId) &&
        matchesRequest(query, r, r.query, null),
    );
  }

  /** Empty the request log. */
  clearRequests(): void {
    this.log.length = 0;
  }

  // ------------------------------------------------------------------ seam

  /**
   * Called by the server for every API request after authentication and before routing.
   * Returns `true` when a rule answered the request.
   */
  onRequest(ctx: RequestContext, req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> {
    const record = new LogRecord(ctx);
    this.log.push(record);
    // Trim in batches so a long run costs amortised O(1) per request, not a shift of the whole log.
    if (this.log.length > this.logLimit + (this.logLimit >> 2))
      this.log.splice(0, this.log.length - this.logLimit);
    const origWriteHead = res.writeHead;
    // Note the status when the response starts, whoever writes it (implicit headers also go through
    // writeHead: ServerResponse#_implicitHeader calls this.writeHead(statusCode)).
    res.writeHead = function (this: ServerResponse, code: number, ...rest: unknown[]) {
      record.status = code;
      return (origWriteHead as (...a: unknown[]) => ServerResponse).call(this, code, ...rest);
    } as typeof res.writeHead;

    const token = bearerToken(req);
    // Only remembered when a rule can ask (a WeakMap entry per request is not free for the GC).
    if (token !== undefined && this.rules.some((r) => r.spec.match?.token !== undefined))
      this.tokens.set(ctx, token);
    const holds: Promise<void>[] = [];
    for (const rule of this.rules) {
      if (rule.spec.type !== 'delayRequests' || !rule.active) continue;
      if (!matchesRequest(rule.spec.match, ctx, ctx.query, token) || !rule.take()) continue;
      holds.push(this.hold(rule as Rule & { spec: DelayRequestsSpec }));
    }
    const answer = (): boolean => {
      for (const rule of this.rules) {
        if (!rule.active) continue;
        if (this.tryRule(rule, ctx, token, res)) {
          record.faultId = rule.id;
          return true;
        }
      }
      return false;
    };
    if (holds.length === 0) return answer();
    return Promise.all(holds).then(answer);
  }

  private hold(rule: Rule & { spec: DelayRequestsSpec }): Promise<void> {
    const { delayMs, barrier } = rule.spec;
    return new Promise<void>((resolve) => {
      if (barrier === undefined) {
        setTimeout(resolve, delayMs ?? 0);
        return;
      }
      const release = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const i = rule.waiting.indexOf(release);
        if (i >= 0) rule.waiting.splice(i, 1);
        resolve();
      }, delayMs ?? 10_000);
      rule.waiting.push(release);
      if (rule.waiting.length >= barrier) for (const r of rule.waiting.splice(0)) r();
    });
  }

  /** Called by the server when a watch starts; every frame of that watch goes through the returned hooks. */
  onWatchStart(ctx: RequestContext, writer: WatchWriter): WatchFaults {
    const plan: WatchPlan = { delays: [] };
    for (const rule of this.rules) {
      if (!rule.active || !matchesRequest(rule.spec.match, ctx, ctx.query, this.tokens.get(ctx))) continue;
      switch (rule.spec.type) {
        case 'endWatch':
          if (plan.end === undefined && rule.take()) plan.end = rule as Rule & { spec: EndWatchesSpec };
          break;
        case 'shapeWatch':
          if (plan.shape === undefined && rule.take()) plan.shape = rule as Rule & { spec: ShapeWatchSpec };
          break;
        case 'delayEvents':
          // hits and `times` count delayed events, not watches.
          plan.delays.push(rule as Rule & { spec: DelayEventsSpec });
          break;
        case 'suppressInitialEventsEnd':
          if (plan.suppressEnd === undefined && ctx.query.get('sendInitialEvents') === 'true' && rule.take())
            plan.suppressEnd = rule;
          break;
        default:
          break;
      }
    }
    if (plan.end === undefined && plan.shape === undefined && plan.delays.length === 0 && !plan.suppressEnd) {
      return { deliver: (_event, line) => writer.write(line), close: () => {} };
    }
    return new WatchSession(writer, plan);
  }

  // ------------------------------------------------------------------ request rules

  private tryRule(rule: Rule, ctx: RequestContext, token: string | undefined, res: ServerResponse): boolean {
    const spec = rule.spec;
    switch (spec.type) {
      case 'fail': {
        if (!matchesRequest(spec.match, ctx, ctx.query, token)) return false;
        if (rule.random !== undefined && rule.random() >= (spec.probability ?? 1)) return false;
        if (!rule.take()) return false;
        const retryAfter =
          spec.retryAfterSeconds === undefined
            ? spec.status === 429
              ? 1
              : undefined
            : spec.retryAfterSeconds;
        const headers: Record<string, string> = { ...baseHeaders(), ...(spec.headers ?? {}) };
        if (retryAfter !== undefined && retryAfter !== null) headers['Retry-After'] = String(retryAfter);
        if (spec.body === 'empty') {
          // For a 200 on a watch, this is what a proxy that gave up mid-way looks like: headers, no body.
          res.writeHead(spec.status, headers);
          res.end();
          return true;
        }
        if (typeof spec.body === 'object') {
          const text = Buffer.from(spec.body.raw, 'utf8');
          res.writeHead(spec.status, { ...headers, 'Content-Length': String(text.length) });
          res.end(text);
          return true;
        }
        const details: Record<string, unknown> = { ...(spec.details ?? {}) };
        if (retryAfter !== undefined && retryAfter !== null) details.retryAfterSeconds = retryAfter;
        sendJson(res, spec.status, statusFor(spec.status, { ...pick(spec), details }), headers);
        return true;
      }
      case 'expire': {
        const verbs = spec.match?.verb === undefined ? ['list', 'watch'] : undefined;
        if (verbs !== undefined && !verbs.includes(ctx.verb)) return false;
        if (!matchesRequest(spec.match, ctx, ctx.query, token)) return false;
        if (!rule.take()) return false;
        if (ctx.verb === 'watch') {
          const rv = ctx.query.get('resourceVersion') ?? '0';
          const n = Number(rv);
          const current = this.host().store?.rv;
          const oldest = typeof current === 'number' ? current : Number.isFinite(n) ? n + 1 : 0;
          const message = `too old resource version: ${rv} (${oldest})`;
          res.writeHead(200, { ...baseHeaders(), 'Transfer-Encoding': 'chunked' });
          res.write(
            `${JSON.stringify({ type: 'ERROR', object: statusFor(410, { message, reason: 'Expired' }) })}\n`,
          );
          res.end();
          return true;
        }
        const message = ctx.query.get('continue') ? CONTINUE_EXPIRED_MESSAGE : LIST_EXPIRED_MESSAGE;
        sendJson(res, 410, statusFor(410, { message, reason: 'Expired' }), baseHeaders());
        return true;
      }
      case 'blackhole': {
        if (!matchesRequest(spec.match, ctx, ctx.query, token)) return false;
        if (!rule.take()) return false;
        if (spec.sendHeaders ?? true) {
          res.writeHead(200, { ...baseHeaders(), 'Transfer-Encoding': 'chunked' });
          res.flushHeaders();
        }
        this.blackholed.add(res);
        res.once('close', () => this.blackholed.delete(res));
        return true;
      }
      case 'requireSelector': {
        const m: RequestMatch =
          spec.match?.verb === undefined ? { ...spec.match, verb: ['list', 'watch'] } : spec.match;
        if (!matchesRequest(m, ctx, ctx.query, token)) return false;
        if (spec.token !== undefined && token !== spec.token) return false;
        const fieldOk =
          spec.fieldSelector === undefined || ctx.query.get('fieldSelector') === spec.fieldSelector;
        const labelOk =
          spec.labelSelector === undefined || ctx.query.get('labelSelector') === spec.labelSelector;
        if (fieldOk && labelOk) return false;
        if (!rule.take()) return false;
        const what = [
          spec.fieldSelector !== undefined ? `field selector "${spec.fieldSelector}"` : undefined,
          spec.labelSelector !== undefined ? `label selector "${spec.labelSelector}"` : undefined,
        ]
          .filter(Boolean)
          .join(' and ');
        const res0 = ctx.resource ?? 'resource';
        const group = ctx.group ? `.${ctx.group}` : '';
        const message = `${res0}${group} is forbidden: this client may ${ctx.verb} ${res0} only with ${what}`;
        sendJson(
          res,
          403,
          statusFor(403, { message, details: { kind: res0, ...(ctx.group ? { group: ctx.group } : {}) } }),
          baseHeaders(),
        );
        return true;
      }
      default:
        return false;
    }
  }
}

function baseHeaders(): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Audit-Id': randomUUID(),
  };
}

function sendJson(res: ServerResponse, code: number, body: unknown, headers: Record<string, string>): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { ...headers, 'Content-Length': String(Buffer.byteLength(text)) });
  res.end(text);
}

export type { IncomingMessage, ServerResponse };
