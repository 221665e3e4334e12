/** The seam between the fault injector and the API server core: what each side hands the other. */

/** One request as the server saw it. Holds no credentials. */
export interface RequestRecord {
  /** Sequence number, 1-based, in arrival order (the fault injector's `RequestContext.id`). */
  readonly id: number;
  /** Wall clock, **milliseconds** since the epoch, when the request arrived. */
  readonly time: number;
  readonly method: string;
  readonly path: string;
  /** The raw query string, without `?`. */
  readonly query: string;
  /** Authenticated user name, or `system:anonymous` (public paths and failed authentication). */
  readonly user: string;
  /** get|list|watch|create|update|patch|delete|deletecollection, or `nonresource`. */
  readonly verb: string;
  readonly group?: string | undefined;
  readonly version?: string | undefined;
  readonly resource?: string | undefined;
  readonly subresource?: string | undefined;
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
  /** HTTP status sent, once the response has started (`undefined` while pending or if none was sent). */
  readonly status?: number | undefined;
  /** The fault rule that answered this request, if one did. */
  readonly faultId?: string | undefined;
}

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
 * the faults that do not need it (calling one that is missing throws `FaultError` `ENOTSUPPORTED`).
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
  /** The server's request log (the one log: the injector queries it, it keeps none of its own). */
  readonly requestLog?: RequestRecord[];
}
