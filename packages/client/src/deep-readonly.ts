/** Deep read-only and deep mutable object types (no imports: kinds.ts and readonly.ts both use them). */

/**
 * `T` with every property, array and map read-only, all the way down: the type of an object an informer cache
 * hands out (it is deep-frozen, so a write throws `TypeError` at run time; here it is a compile error). A
 * `DeepReadonly<T>` is not assignable to `T` (its arrays are read-only), so passing a cached object to a writer
 * without {@link deepCopy} does not compile either. `unknown` fields stay `unknown`.
 */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends readonly (infer U)[]
    ? readonly DeepReadonly<U>[]
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T;

/** The editable counterpart of {@link DeepReadonly}: `T` with every `readonly` removed, all the way down. */
export type DeepMutable<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends readonly (infer U)[]
    ? DeepMutable<U>[]
    : T extends object
      ? { -readonly [K in keyof T]: DeepMutable<T[K]> }
      : T;
