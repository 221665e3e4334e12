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
