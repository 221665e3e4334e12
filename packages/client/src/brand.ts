/**
 * Class identity that survives two installed copies of `@kubeloop/client` (a dependency pulling its own copy):
 * each error class marks its instances with a global `Symbol.for` key and answers `instanceof` by that mark,
 * so `err instanceof StatusError` and `isNotFound(err)` hold for an error made by the other copy.
 * @internal
 */
const keyOf = (name: string) => Symbol.for(`kubeloop.client.${name}`);

/** Marks `obj` as an instance of the class called `name`. */
export function brand(obj: object, name: string): void {
  Object.defineProperty(obj, keyOf(name), { value: true });
}

/** Whether `value` carries the mark of the class called `name`. */
export function hasBrand(value: unknown, name: string): boolean {
  return (
    typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[keyOf(name)] === true
  );
}

/**
 * Base of the package's error classes. A class names its mark in `static readonly brandName`; an instance
 * carries the mark of every class in its chain that names one, and `value instanceof X` answers by X's mark,
 * so both hold for an error made by another installed copy. A subclass that names no mark is tested by its
 * prototype chain, as usual.
 * @internal
 */
export abstract class BrandedError extends Error {
  /** The mark of this class's instances (`Symbol.for('kubeloop.client.<brandName>')`). */
  static readonly brandName: string;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    for (let c: object | null = new.target; c && c !== BrandedError; c = Object.getPrototypeOf(c))
      if (Object.hasOwn(c, 'brandName')) brand(this, (c as typeof BrandedError).brandName);
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class `instanceof` asks about, not BrandedError
    return isInstance(this, value);
  }
}

/** `value instanceof cls` for a {@link BrandedError} class: by its mark, or by prototype when it names none. */
function isInstance(cls: typeof BrandedError, value: unknown): boolean {
  return Object.hasOwn(cls, 'brandName')
    ? hasBrand(value, cls.brandName)
    : Function.prototype[Symbol.hasInstance].call(cls, value);
}
