import type { IncomingMessage, ServerResponse } from 'node:http';

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
  close(): void;
}

/**
 * Fault injection seam of the API server (owned by the fault-injection work; this is the no-op default).
 */
export class FaultInjector {
  // biome-ignore lint/complexity/noUselessConstructor: the server passes itself; the seam's signature
  constructor(_server: unknown) {}

  /** Called for every API request after authentication and before routing; `true` = the request was handled. */
  onRequest(_ctx: RequestContext, _req: unknown, _res: unknown): boolean | Promise<boolean> {
    return false;
  }

  /** Called when a watch starts; every event of that watch goes through the returned hooks. */
  onWatchStart(_ctx: RequestContext, writer: WatchWriter): WatchFaults {
    return {
      deliver: (_event, line) => writer.write(line),
      close: () => {},
    };
  }
}

export type { IncomingMessage, ServerResponse };
