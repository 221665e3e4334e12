/**
 * The fault rules as one zod schema: it validates a rule (from the typed API or the admin endpoint's JSON)
 * and is where the rule types come from (`z.infer`), so the checks and the types cannot drift apart. The
 * request rules are here, the watch rules in `watch-spec.ts`, their common fields in `spec-fields.ts`.
 */
import { z } from 'zod';
import { FaultError } from './errors.js';
import {
  atLeast,
  httpCode,
  ms,
  nonNegativeInt,
  ruleBase,
  statusFields,
  str,
  stringRecord,
} from './spec-fields.js';
import {
  blackholeSchema,
  delayEventsSchema,
  endWatchesSchema,
  shapeWatchSchema,
  suppressInitialEventsEndSchema,
} from './watch-spec.js';

export { type RequestMatch, requestMatchSchema, VERBS, type Verb } from './spec-fields.js';
export {
  blackholeSchema,
  delayEventsSchema,
  endWatchesSchema,
  type ShapeStep,
  shapeStepSchema,
  shapeWatchSchema,
  suppressInitialEventsEndSchema,
} from './watch-spec.js';

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
