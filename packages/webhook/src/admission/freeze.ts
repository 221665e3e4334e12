/** Freezes a JSON value in place, all the way down, so handlers cannot change the request they were given. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  // indexed and for…in walks: no Object.values array per object (a review's request has dozens of them)
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
  else for (const k in value) deepFreeze((value as Record<string, unknown>)[k]);
  return value;
}
