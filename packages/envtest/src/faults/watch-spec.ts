/**
 * The fault rules that act on open watch streams: end them, shape their bytes, delay their events, suppress the
 * end-of-initial-events bookmark (schemas and inferred types; the injector's watch session plays them).
 */
import { z } from 'zod';
import { atLeast, bool, httpCode, ms, positiveInt, ruleBase, str } from './spec-fields.js';

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
