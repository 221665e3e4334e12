/**
 * Class identity that survives two installed copies of a kubeloop package (a dependency pulling its own copy):
 * each error class marks its instances with a global `Symbol.for` key and answers `instanceof` by that mark,
 * so `err instanceof StatusError` and `isNotFound(err)` hold for an error made by the other copy.
 */
const keyOf = (name: string) => Symbol.for(`kubeloop.${name}`);

/**
 * Marks `obj` as an instance of the class whose mark is `name` (the global symbol `kubeloop.<name>`). Names are
 * qualified by package, e.g. `client.StatusError`, so two packages' classes of one name stay apart.
 */
export function brand(obj: object, name: string): void {
  Object.defineProperty(obj, keyOf(name), { value: true });
}

/** Whether `value` is an object carrying the mark `name` set by {@link brand}; never throws. */
export function hasBrand(value: unknown, name: string): boolean {
  return (
    typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[keyOf(name)] === true
  );
}

/**
 * Base of kubeloop's error classes. A class names its mark in `static readonly brandName` (package-qualified:
 * `client.StatusError`); an instance carries the mark of every class in its chain that names one, and
 * `value instanceof X` answers by X's mark, so both hold for an error made by another installed copy of the
 * package. A subclass that names no mark is tested by its prototype chain, as usual. Go needs none of this:
 * `errors.As` compares types, and a Go binary links one copy of a package.
 */
export abstract class BrandedError extends Error {
  /** The mark of this class's instances (`Symbol.for('kubeloop.<brandName>')`). */
  static readonly brandName: string;

  /** @param message - the error message; `options.cause` is the wrapped error, as for `Error`. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    for (let c: object | null = new.target; c && c !== BrandedError; c = Object.getPrototypeOf(c))
      if (Object.hasOwn(c, 'brandName')) brand(this, (c as typeof BrandedError).brandName);
  }

  /** `value instanceof ThisClass`: by the class's mark when it names one, else by prototype chain. */
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
