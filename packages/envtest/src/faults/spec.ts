/**
 * The fault rules as one zod schema: it validates a rule (from the typed API or the admin endpoint's JSON)
 * and is where the rule types come from (`z.infer`), so the checks and the types cannot drift apart.
 */
import { z } from 'zod';
import { FaultError } from './errors.js';

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

const nonNegativeInt = (what = 'a non-negative integer') =>
  z.int({ error: `must be ${what}` }).min(0, { error: `must be ${what}` });
const positiveInt = () => z.int({ error: 'must be a positive integer' }).min(1, 'must be a positive integer');
const atLeast = (n: number) =>
  z.int({ error: `must be an integer ≥ ${n}` }).min(n, `must be an integer ≥ ${n}`);
const ms = () => nonNegativeInt('a non-negative integer (milliseconds)');
const str = () => z.string({ error: 'must be a string' });
const bool = () => z.boolean({ error: 'must be a boolean' });
const stringRecord = () => z.record(z.string(), z.string(), { error: 'must map strings to strings' });
const httpCode = () =>
  z
    .int({ error: 'must be an HTTP status code' })
    .min(100, 'must be an HTTP status code')
    .max(599, 'must be an HTTP status code');
const stringOrList = <T extends z.ZodType<string>>(item: T) => z.union([item, z.array(item)]);
const verb = z.enum(VERBS, {
  error: (issue) => `${JSON.stringify(issue.input)} is not one of ${VERBS.join('|')}`,
});

/**
 * Which requests a rule applies to. Every field given must match (AND); an absent field matches anything.
 * String fields compare exactly; array fields match any of their members. All fields are JSON, so the same
 * object can be posted to the admin endpoint. Unknown fields are refused (a misspelt field would make a rule
 * that silently matches everything).
 */
export const requestMatchSchema = z.strictObject({
  /** HTTP method(s), upper case (`GET`, `POST`, …). */
  method: stringOrList(str()).optional(),
  /** Verb(s) as the server classifies them: `watch` is a GET of a collection with `watch=true`. */
  verb: stringOrList(verb).optional(),
  /** The exact URL path, without the query. */
  path: str().optional(),
  /** A prefix of the URL path. */
  pathPrefix: str().optional(),
  /** A regular expression (JavaScript syntax, as a string) tested against the URL path. */
  pathPattern: str().refine(isRegExp, { error: 'is not a valid regular expression' }).optional(),
  /** API group; `''` is the core group. */
  group: str().optional(),
  version: str().optional(),
  /** Resource plural, e.g. `pods`. */
  resource: stringOrList(str()).optional(),
  /** Subresource, e.g. `status`; `''` matches only requests without one. */
  subresource: str().optional(),
  /** Namespace from the URL; `''` matches only requests without one (cluster-wide or cluster-scoped). */
  namespace: str().optional(),
  /** Object name from the URL. */
  name: str().optional(),
  /** `true`: only requests carrying a `continue` token; `false`: only requests without one. */
  hasContinue: bool().optional(),
  /** Query parameters that must be present with exactly these (decoded) values. */
  query: stringRecord().optional(),
  /**
   * The request's bearer token must equal this (e.g. to fail one client's requests with 401). Never logged;
   * ignored when querying the request log, which holds no tokens.
   */
  token: str().optional(),
});
/** Which requests a rule applies to: every field given must match (strings exactly, arrays by any member); unknown fields are refused when the rule is parsed. */
export type RequestMatch = z.infer<typeof requestMatchSchema>;

const statusFields = {
  /** Status.reason, e.g. `ServiceUnavailable`. */
  reason: str().optional(),
  /** Status.message. */
  message: str().optional(),
};

const ruleBase = {
  /** Which requests or watches the rule applies to; absent = all. */
  match: requestMatchSchema.optional(),
  /**
   * Act on at most this many requests (request rules), watches (`endWatch`, `shapeWatch`,
   * `suppressInitialEventsEnd`) or events (`delayEvents`), then go inactive. Absent = until cleared.
   */
  times: positiveInt().optional(),
};

/**
 * `fail`: answer matching requests with an error Status (or an empty or raw body), before the server routes
 * them. `probability` makes it fail only that fraction of matching requests; `seed` makes that repeatable.
 */
export const failRequestsSchema = z.strictObject({
  type: z.literal('fail'),
  ...ruleBase,
  ...statusFields,
  /** Extra Status.details (merged over the defaults). */
  details: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
  /** HTTP status code, e.g. 500, 503, 429, 410. */
  status: httpCode(),
  /**
   * `Retry-After` header value in **seconds** (also `details.retryAfterSeconds`). Defaults to 1 for 429,
   * none otherwise. `null` sends no header even for 429.
   */
  retryAfterSeconds: nonNegativeInt('a non-negative integer (seconds) or null').nullable().optional(),
  /**
   * `'status'` (default): a JSON Status body. `'empty'`: the status line and headers, no body at all
   * (with `status: 200` on a watch this is C02's "200 with an empty body"). `{ raw }`: exactly this text as
   * the body (Content-Type `application/json` unless `headers` says otherwise) — a truncated or malformed
   * list reply, a proxy's HTML page. `{ rawBase64 }`: exactly these bytes (e.g. invalid UTF-8).
   */
  body: z
    .union(
      [
        z.literal('status'),
        z.literal('empty'),
        z.strictObject({ raw: z.string() }),
        z.strictObject({ rawBase64: z.base64() }),
      ],
      { error: 'must be "status", "empty", {"raw": "<text>"} or {"rawBase64": "<base64 bytes>"}' },
    )
    .optional(),
  /** Fraction (0..1] of matching requests that fail; absent = all. */
  probability: z
    .number({ error: 'must be in (0, 1]' })
    .gt(0, 'must be in (0, 1]')
    .max(1, 'must be in (0, 1]')
    .optional(),
  /** Seed for the `probability` draw (a fixed seed gives the same sequence every run). */
  seed: nonNegativeInt().optional(),
  /** Extra response headers. */
  headers: stringRecord().optional(),
});

/**
 * `expire`: answer matching requests as if their resourceVersion had been compacted away: a list gets HTTP
 * 410 `Expired` ("The resourceVersion for the provided list is too old."), a list with a `continue` token
 * gets 410 `Expired` with the continue-token message, and a watch gets what a real API server sends: HTTP
 * 200, one `ERROR` event holding a 410 `Expired` Status, then a clean end. Defaults to `verb: [list, watch]`.
 */
export const expireSchema = z.strictObject({ type: z.literal('expire'), ...ruleBase });

/** `endWatch`: end matching watches cleanly (a normal chunked end) after a time and/or a number of events. */
export const endWatchesSchema = z
  .strictObject({
    type: z.literal('endWatch'),
    ...ruleBase,
    /** End this many **milliseconds** after the watch started. */
    afterMs: ms().optional(),
    /** End right after this many events have been written (every frame counts, bookmarks included). */
    afterEvents: positiveInt().optional(),
  })
  .refine((s) => s.afterMs !== undefined || s.afterEvents !== undefined, {
    error: 'needs afterMs and/or afterEvents',
  });

/**
 * `blackhole`: keep matching connections open and never send anything more. With `sendHeaders` (default
 * true) the client first gets `200` and the watch headers, as a stalled watch would; with `false` it never
 * gets a response at all. The socket stays open until the client closes it, the server restarts or stops.
 */
export const blackholeSchema = z.strictObject({
  type: z.literal('blackhole'),
  ...ruleBase,
  sendHeaders: bool().optional(),
});

const statusStepFields = {
  code: httpCode().optional(),
  reason: str().optional(),
  message: str().optional(),
};

const SHAPE_OPS = [
  'pass',
  'split',
  'merge',
  'truncate',
  'noNewline',
  'raw',
  'status',
  'error',
  'delay',
  'end',
  'destroy',
];

/** One step of a watch-shaping script; see {@link shapeWatchSchema}. */
export const shapeStepSchema = z.discriminatedUnion(
  'op',
  [
    /** Write the next `count` (default 1) frames unchanged. */
    z.strictObject({ op: z.literal('pass'), count: positiveInt().optional() }),
    /**
     * Write the next frame in `parts` (default 3) writes (= HTTP chunks), waiting `delayMs` (default 0)
     * between them. With `insideUtf8` one cut falls between the bytes of the frame's first multi-byte UTF-8
     * character (a frame without one is cut evenly).
     */
    z.strictObject({
      op: z.literal('split'),
      parts: atLeast(2).optional(),
      delayMs: ms().optional(),
      insideUtf8: bool().optional(),
    }),
    /** Write the next `count` frames together in one write. */
    z.strictObject({ op: z.literal('merge'), count: atLeast(2) }),
    /** Write only the first `bytes` (default: half) of the next frame, then end the response. */
    z.strictObject({
      op: z.literal('truncate'),
      bytes: positiveInt().optional(),
      after: z.enum(['end', 'destroy'], { error: 'must be "end" or "destroy"' }).optional(),
    }),
    /** Write the next frame without its trailing newline, then end the response cleanly. */
    z.strictObject({ op: z.literal('noNewline') }),
    /** Write `data` as-is (e.g. an HTML line) without consuming a frame; then go on, end or destroy. */
    z.strictObject({
      op: z.literal('raw'),
      data: str(),
      after: z
        .enum(['continue', 'end', 'destroy'], { error: 'must be "continue", "end" or "destroy"' })
        .optional(),
    }),
    /** Write a bare Status object (not wrapped in an event) as one line; then go on or end. */
    z.strictObject({
      op: z.literal('status'),
      ...statusStepFields,
      after: z.enum(['continue', 'end'], { error: 'must be "continue" or "end"' }).optional(),
    }),
    /** Write an `ERROR` event holding a Status (default 410 Expired), then end the response cleanly. */
    z.strictObject({ op: z.literal('error'), ...statusStepFields }),
    /** Wait this many **milliseconds** before the next step. */
    z.strictObject({ op: z.literal('delay'), ms: ms() }),
    /** End the response cleanly now. */
    z.strictObject({ op: z.literal('end') }),
    /** Destroy the connection now (no chunked terminator: the client sees a broken stream). */
    z.strictObject({ op: z.literal('destroy') }),
  ],
  {
    error: (issue) =>
      `${JSON.stringify((issue.input as { op?: unknown } | undefined)?.op)} is unknown (known: ${SHAPE_OPS.join('|')})`,
  },
);
/** One step of a watch-shaping script. */
export type ShapeStep = z.infer<typeof shapeStepSchema>;

/**
 * `shapeWatch`: shape the bytes of matching watches: the steps run in order over the frames the server
 * delivers (every frame counts, bookmarks included); once the steps are used up frames pass unchanged. Steps
 * that consume no frame (`raw`, `status`, `error`, `delay`, `end`, `destroy`) at the head of the script run
 * as soon as the watch starts.
 */
export const shapeWatchSchema = z.strictObject({
  type: z.literal('shapeWatch'),
  ...ruleBase,
  steps: z.array(shapeStepSchema, { error: 'must be a non-empty array' }).min(1, 'must be a non-empty array'),
});

/**
 * `delayEvents`: delay delivery of watch events about one object (by namespace and name, or name prefix) by
 * `delayMs` **milliseconds**. `order: 'stream'` (default) holds the whole stream behind the delayed event,
 * as a lagging watch cache would; `order: 'object'` holds only that object's events (other objects' events
 * overtake them; bookmarks are dropped while an event is held). Events still held when the watch ends are
 * dropped; a client that re-watches from its last resourceVersion gets them replayed from the history.
 */
export const delayEventsSchema = z
  .strictObject({
    type: z.literal('delayEvents'),
    ...ruleBase,
    /** Object namespace; absent matches any (use for cluster-scoped objects). */
    namespace: str().optional(),
    /** The object's name. Give exactly one of `name` and `namePrefix`. */
    name: str().min(1, 'must be a non-empty string').optional(),
    /** Matches every object whose name starts with this (objects made with `generateName`). */
    namePrefix: str().min(1, 'must be a non-empty string').optional(),
    delayMs: ms(),
    /** Event types to delay; absent = ADDED, MODIFIED and DELETED. */
    eventTypes: z.array(z.string(), { error: 'must be an array of strings' }).optional(),
    order: z.enum(['stream', 'object'], { error: 'must be "stream" or "object"' }).optional(),
  })
  .refine((s) => (s.name === undefined) !== (s.namePrefix === undefined), {
    error: 'needs exactly one of name and namePrefix',
  });

/**
 * `suppressInitialEventsEnd`: suppress the `BOOKMARK` carrying the `k8s.io/initial-events-end` annotation on
 * matching streaming-list watches (`sendInitialEvents=true`): the initial ADDED events are sent, the end
 * marker never (C04).
 */
export const suppressInitialEventsEndSchema = z.strictObject({
  type: z.literal('suppressInitialEventsEnd'),
  ...ruleBase,
});

/**
 * `requireSelector`: answer matching requests with 403 Forbidden unless their query carries exactly this
 * field selector and/or label selector (compared after URL decoding, byte for byte). With `token`, the rule
 * applies only to requests whose bearer token equals it. Defaults to `verb: ['list', 'watch']`.
 */
export const requireSelectorSchema = z
  .strictObject({
    type: z.literal('requireSelector'),
    ...ruleBase,
    fieldSelector: str().optional(),
    labelSelector: str().optional(),
    token: str().optional(),
  })
  .refine((s) => s.fieldSelector !== undefined || s.labelSelector !== undefined, {
    error: 'needs fieldSelector and/or labelSelector',
  });

/**
 * `delayRequests`: hold matching requests before the server handles them ("slow replies"). With
 * `barrier: n`, each held request waits until `n` matching requests are waiting and then all are let through
 * together (a race on purpose, e.g. two writers at the same moment, C20); `delayMs` then caps the wait.
 * Without `barrier`, each request is held `delayMs`. The request is then served normally.
 */
export const delayRequestsSchema = z
  .strictObject({
    type: z.literal('delayRequests'),
    ...ruleBase,
    /** **Milliseconds** to hold each request (with `barrier`: the longest wait; default 10,000). */
    delayMs: ms().optional(),
    barrier: atLeast(2).optional(),
  })
  .refine((s) => s.delayMs !== undefined || s.barrier !== undefined, {
    error: 'needs delayMs and/or barrier',
  });

const FAULT_TYPES = [
  'fail',
  'expire',
  'endWatch',
  'blackhole',
  'shapeWatch',
  'delayEvents',
  'suppressInitialEventsEnd',
  'requireSelector',
  'delayRequests',
] as const;

/** Every fault rule, as a JSON-able object (the admin endpoint's `POST /faults` body). */
export const faultSpecSchema = z.discriminatedUnion(
  'type',
  [
    delayRequestsSchema,
    failRequestsSchema,
    expireSchema,
    endWatchesSchema,
    blackholeSchema,
    shapeWatchSchema,
    delayEventsSchema,
    suppressInitialEventsEndSchema,
    requireSelectorSchema,
  ],
  {
    error: (issue) =>
      `unknown fault type ${JSON.stringify((issue.input as { type?: unknown } | undefined)?.type)} (known: ${FAULT_TYPES.join(', ')})`,
  },
);

/** Every fault rule, as a JSON-able object. */
export type FaultSpec = z.infer<typeof faultSpecSchema>;
export type FailRequestsSpec = z.infer<typeof failRequestsSchema>;
export type ExpireSpec = z.infer<typeof expireSchema>;
export type EndWatchesSpec = z.infer<typeof endWatchesSchema>;
export type BlackholeSpec = z.infer<typeof blackholeSchema>;
export type ShapeWatchSpec = z.infer<typeof shapeWatchSchema>;
export type DelayEventsSpec = z.infer<typeof delayEventsSchema>;
export type SuppressInitialEventsEndSpec = z.infer<typeof suppressInitialEventsEndSchema>;
export type RequireSelectorSpec = z.infer<typeof requireSelectorSchema>;
export type DelayRequestsSpec = z.infer<typeof delayRequestsSchema>;

/** The Status object a rule answers with; unset fields get the defaults of the HTTP code. */
export interface StatusSpec {
  /** Status.reason, e.g. `ServiceUnavailable`. */
  reason?: string;
  /** Status.message. */
  message?: string;
  /** Extra Status.details (merged over the defaults). */
  details?: Record<string, unknown>;
}

/**
 * Check a rule spec (e.g. one that arrived as JSON) and return it typed.
 * @throws FaultError `EINVALID` naming the first bad field and what it must be, e.g.
 *   `endWatch.afterEvents must be a positive integer`, `match.verb "lst" is not one of get|list|…`,
 *   `unknown match field "verbs"`.
 */
export function validateFaultSpec(input: unknown): FaultSpec {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new FaultError('EINVALID', 'a fault rule must be an object');
  const parsed = faultSpecSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const type = (input as { type?: unknown }).type;
  throw new FaultError('EINVALID', describeIssue(parsed.error.issues, typeof type === 'string' ? type : ''));
}

type Issue = z.core.$ZodIssue;

/** One readable sentence for the first issue: `<where> <what is wrong>`. */
function describeIssue(issues: readonly Issue[], type: string): string {
  const issue = pickIssue(issues);
  if (issue === undefined) return 'invalid fault rule';
  const path = issue.path;
  const where = formatPath(path[0] === 'match' || path[0] === 'times' ? path : [type, ...path]);
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => JSON.stringify(k)).join(', ');
    if (path.length === 1 && path[0] === 'match') return `unknown match field ${keys}`;
    return `unknown field ${keys} in ${where}`;
  }
  if (issue.code === 'invalid_union' && path.at(-1) === 'type') return issue.message;
  if (issue.message.startsWith('unknown fault type')) return issue.message;
  if (issue.code === 'invalid_type' && issue.input === undefined) return `${where} is required`;
  return `${where} ${issue.message}`;
}

/**
 * For a union (a string or a list of them), the branch that got furthest explains the error best: the one
 * whose issue is deepest, then one that is not a plain type mismatch.
 */
function pickIssue(issues: readonly Issue[]): Issue | undefined {
  const first = issues[0];
  if (first?.code !== 'invalid_union' || first.errors.length === 0) return first;
  let best: Issue | undefined;
  for (const branch of first.errors) {
    const i = branch[0];
    if (i === undefined) continue;
    const better =
      best === undefined ||
      i.path.length > best.path.length ||
      (i.path.length === best.path.length && best.code === 'invalid_type' && i.code !== 'invalid_type');
    if (better) best = i;
  }
  if (best === undefined) return first;
  return pickIssue([{ ...best, path: [...first.path, ...best.path] } as Issue]);
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (p === '') continue;
    out += typeof p === 'number' ? `[${p}]` : out === '' ? String(p) : `.${String(p)}`;
  }
  return out;
}

function isRegExp(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}
