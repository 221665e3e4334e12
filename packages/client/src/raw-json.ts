/**
 * The JSON text an object was decoded from, carried beside it for a caller that keeps bytes instead of objects
 * (an informer with `objectRetention: 'bytes'`): a list item given to `ListOptions.decodeItem`, or a watch
 * event's object when `WatchOptions.keepObjectJson` is set. No counterpart in client-go, whose decoders go
 * straight to typed structs.
 */

/**
 * The symbol under which an object carries its JSON text: a non-enumerable own property, so `JSON.stringify`,
 * `structuredClone`, `deepCopy`, `Object.keys` and equality checks never see it. Shared by every installed
 * copy of this package (`Symbol.for`).
 */
export const RAW_JSON: unique symbol = Symbol.for('kubeloop.client.rawJson') as never;

/** The JSON text `obj` was decoded from, if the decoder kept it ({@link RAW_JSON}); else `undefined`. */
export function rawJsonOf(obj: object): string | undefined {
  const v = (obj as { [RAW_JSON]?: unknown })[RAW_JSON];
  return typeof v === 'string' ? v : undefined;
}

/**
 * Attaches `json` to `obj` under {@link RAW_JSON} (non-enumerable, not writable) and returns `obj`. `json`
 * must be the text `obj` was parsed from: a reader that keeps it instead of the object parses it again later.
 * A frozen object cannot take it and is returned as is.
 */
export function withRawJson<T extends object>(obj: T, json: string): T {
  if (Object.isExtensible(obj)) Object.defineProperty(obj, RAW_JSON, { value: json });
  return obj;
}
