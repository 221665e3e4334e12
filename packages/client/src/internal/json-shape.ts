// Shape checks of decoded JSON replies (list items, single objects, watch event objects).

/** True for a decoded JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Names the JSON type of a decoded value for an error message ("an array", "null", "a number" …). */
export function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'empty';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
