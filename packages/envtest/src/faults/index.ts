/**
 * Fault injection for the envtest API server: rule specs (one zod schema that validates and types them),
 * request matching, the per-watch shaping pipeline, the request rules and the injector that ties them to the
 * server. The server's request log lives here too, as the one log both the server and the rules use.
 */
export { FaultError } from './errors.js';
export { FaultInjector } from './injector.js';
export {
  appendRequest,
  LogRecord,
  queryRequests,
  REQUEST_LOG_LIMIT,
  type RequestQuery,
  type RequestRecord,
} from './request-log.js';
export type { FaultHandle } from './rule.js';
export type { FaultHost, RequestContext, WatchFaults, WatchWriter } from './seam.js';
export {
  type BlackholeSpec,
  type DelayEventsSpec,
  type DelayRequestsSpec,
  type EndWatchesSpec,
  type ExpireSpec,
  type FailRequestsSpec,
  type FaultSpec,
  faultSpecSchema,
  type RequestMatch,
  type RequireSelectorSpec,
  type ShapeStep,
  type ShapeWatchSpec,
  type StatusSpec,
  type SuppressInitialEventsEndSpec,
  VERBS,
  type Verb,
  validateFaultSpec,
} from './spec.js';
export { splitPoints } from './watch-session.js';
