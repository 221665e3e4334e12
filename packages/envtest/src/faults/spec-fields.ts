/**
 * The pieces every fault rule's schema is built from: number/string field validators with the error wording of
 * the admin endpoint, the request match, and the fields every rule has (`match`, `times`, Status fields).
 */
import { z } from 'zod';

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

export const nonNegativeInt = (what = 'a non-negative integer') =>
  z.int({ error: `must be ${what}` }).min(0, { error: `must be ${what}` });
export const positiveInt = () =>
  z.int({ error: 'must be a positive integer' }).min(1, 'must be a positive integer');
export const atLeast = (n: number) =>
  z.int({ error: `must be an integer ≥ ${n}` }).min(n, `must be an integer ≥ ${n}`);
export const ms = () => nonNegativeInt('a non-negative integer (milliseconds)');
export const str = () => z.string({ error: 'must be a string' });
export const bool = () => z.boolean({ error: 'must be a boolean' });
export const stringRecord = () => z.record(z.string(), z.string(), { error: 'must map strings to strings' });
export const httpCode = () =>
  z
    .int({ error: 'must be an HTTP status code' })
    .min(100, 'must be an HTTP status code')
    .max(599, 'must be an HTTP status code');
export const stringOrList = <T extends z.ZodType<string>>(item: T) => z.union([item, z.array(item)]);
export const verb = z.enum(VERBS, {
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
   * `true`: only requests that read a collection's state from the start, whichever way the client asks for
   * it — a `list`, or a streaming list (WatchList: a `watch` with `sendInitialEvents=true`) — so one rule
   * holds or fails an informer's initial sync on both paths; `false`: only other requests.
   */
  initialList: bool().optional(),
  /**
   * The request's bearer token must equal this (e.g. to fail one client's requests with 401). Never logged;
   * ignored when querying the request log, which holds no tokens.
   */
  token: str().optional(),
});
/** Which requests a rule applies to: every field given must match (strings exactly, arrays by any member); unknown fields are refused when the rule is parsed. */
export type RequestMatch = z.infer<typeof requestMatchSchema>;

export const statusFields = {
  /** Status.reason, e.g. `ServiceUnavailable`. */
  reason: str().optional(),
  /** Status.message. */
  message: str().optional(),
};

export const ruleBase = {
  /** Which requests or watches the rule applies to; absent = all. */
  match: requestMatchSchema.optional(),
  /**
   * Act on at most this many requests (request rules), watches (`endWatch`, `shapeWatch`,
   * `suppressInitialEventsEnd`) or events (`delayEvents`), then go inactive. Absent = until cleared.
   */
  times: positiveInt().optional(),
};

/** Whether `source` compiles as a regular expression. */
function isRegExp(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}
