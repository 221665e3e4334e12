import type { V1Status } from '@kubernetes/client-node';
import { WatchDecodeError } from './errors.js';
import type { KubeObject } from './kinds.js';

/** Watch event types (apimachinery `watch.EventType`). */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/**
 * One decoded watch event. `ERROR` carries the server's `Status` (e.g. 410 Expired); the stream ends
 * after it. `BOOKMARK` carries an object whose only meaningful field is `metadata.resourceVersion`.
 */
export type WatchEvent<T extends KubeObject = KubeObject> =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: T }
  | { readonly type: 'BOOKMARK'; readonly object: T }
  | { readonly type: 'ERROR'; readonly object: V1Status };

const eventTypes = new Set<string>(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

function decodeLine<T extends KubeObject>(line: string): WatchEvent<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (err) {
    throw new WatchDecodeError(
      `watch stream: a line is not JSON (${(err as Error).message}); starts with ${JSON.stringify(line.slice(0, 40))}`,
    );
  }
  if (!parsed || typeof parsed !== 'object')
    throw new WatchDecodeError('watch stream: an event is not an object');
  const ev = parsed as { type?: unknown; object?: unknown };
  if (typeof ev.type !== 'string' || !eventTypes.has(ev.type)) {
    throw new WatchDecodeError(`watch stream: unknown event type ${JSON.stringify(ev.type)}`);
  }
  if (!ev.object || typeof ev.object !== 'object') {
    throw new WatchDecodeError(`watch stream: ${ev.type} event without an object`);
  }
  return ev as WatchEvent<T>;
}

/**
 * Decodes a watch response body — newline-delimited JSON events, arbitrarily split into chunks — into
 * events. Lines may be split across chunks anywhere, including inside a multi-byte UTF-8 character.
 * Blank lines are skipped. A final line without a trailing newline is decoded if it is a complete event
 * (client-go's JSON framer decodes by object, not by newline); a partial one is an error.
 *
 * @throws WatchDecodeError on a line that is not a JSON watch event (the stream must be treated as broken).
 */
export async function* decodeWatchStream<T extends KubeObject = KubeObject>(
  chunks: AsyncIterable<Uint8Array | string>,
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  const decoder = new TextDecoder('utf-8', { fatal: false });
  let buffered = '';
  for await (const chunk of chunks) {
    buffered += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let nl = buffered.indexOf('\n');
    while (nl >= 0) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (line) yield decodeLine<T>(line);
      nl = buffered.indexOf('\n');
    }
  }
  buffered += decoder.decode();
  const rest = buffered.trim();
  if (rest) {
    try {
      JSON.parse(rest);
    } catch {
      throw new WatchDecodeError(
        `watch stream ended inside an event (${rest.length} characters without an end)`,
      );
    }
    yield decodeLine<T>(rest);
  }
}
