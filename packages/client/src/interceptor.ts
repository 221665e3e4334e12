/**
 * Interceptors around a `Client` (controller-runtime `pkg/client/interceptor`): per verb, a function that gets
 * the client below it and the call's arguments and answers in its place — return what the call returns,
 * throw to fail it, or call the client to go on (after changing the arguments, or to inspect the answer).
 */
import type { ApplyConfiguration, ApplyOptions } from './apply.js';
import type { DeleteAllOfOptions } from './delete-all-of.js';
import type { Client, StatusWriter, SubResourceClient } from './interfaces.js';
import { gvkOf, type Kind, type KubeObject, type ObjectKey, type ObjectList } from './kinds.js';
import type {
  DeleteOptions,
  GetOptions,
  ListOptions,
  Patch,
  PatchOptions,
  SubResourceUpdateOptions,
  WatchOptions,
  WriteOptions,
} from './options.js';
import type { RESTMapper } from './rest-mapper.js';
import type { WatchEvent } from './watch.js';

type O = KubeObject;

/**
 * The functions of an interceptor, one per verb (controller-runtime `interceptor.Funcs`); unset ones pass the
 * call through. `client` is the client below this interceptor. Subresource functions get the subresource's
 * name (`'status'`, `'scale'`, `'eviction'`, …) first.
 */
export interface InterceptorFuncs {
  get?(client: Client, kind: Kind, key: ObjectKey, options?: GetOptions): Promise<O>;
  list?(client: Client, kind: Kind, options?: ListOptions): Promise<ObjectList<O>>;
  create?(client: Client, kind: Kind, obj: O, options?: WriteOptions): Promise<O>;
  update?(client: Client, kind: Kind, obj: O, options?: WriteOptions): Promise<O>;
  patch?(client: Client, kind: Kind, key: ObjectKey, patch: Patch, options?: PatchOptions): Promise<O>;
  apply?(client: Client, kind: Kind, config: ApplyConfiguration<O>, options?: ApplyOptions): Promise<O>;
  delete?(client: Client, kind: Kind, key: ObjectKey | O, options?: DeleteOptions): Promise<void>;
  deleteAllOf?(client: Client, kind: Kind, options?: DeleteAllOfOptions): Promise<void>;
  watch?(client: Client, kind: Kind, options?: WatchOptions): AsyncIterable<WatchEvent<O>>;
  subResourceGet?(
    client: Client,
    subResource: string,
    kind: Kind,
    key: ObjectKey,
    options?: GetOptions,
  ): Promise<object>;
  subResourceCreate?(
    client: Client,
    subResource: string,
    kind: Kind,
    obj: O,
    body: object,
    options?: WriteOptions,
  ): Promise<object>;
  subResourceUpdate?(
    client: Client,
    subResource: string,
    kind: Kind,
    obj: O,
    options?: SubResourceUpdateOptions<object>,
  ): Promise<object>;
  subResourcePatch?(
    client: Client,
    subResource: string,
    kind: Kind,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<object>;
  subResourceApply?(
    client: Client,
    subResource: string,
    kind: Kind,
    config: ApplyConfiguration<O>,
    options?: ApplyOptions,
  ): Promise<O>;
}

/**
 * An interceptor: {@link InterceptorFuncs}, optionally only for some kinds (matched by API group and kind,
 * any version); calls for other kinds pass through it untouched.
 */
export interface Interceptor extends InterceptorFuncs {
  readonly kinds?: readonly Kind[];
}

function appliesTo(i: Interceptor, kind: Kind): boolean {
  if (!i.kinds) return true;
  const g = gvkOf(kind);
  return i.kinds.some((k) => {
    const h = gvkOf(k);
    return h.group === g.group && h.kind === g.kind;
  });
}

/** The interceptor's function for `verb`, when it has one and it applies to `kind`. */
function funcFor<K extends keyof InterceptorFuncs>(
  i: Interceptor,
  verb: K,
  kind: Kind,
): InterceptorFuncs[K] | undefined {
  const f = i[verb];
  return f !== undefined && appliesTo(i, kind) ? f : undefined;
}

/**
 * `inner` seen through `interceptor` (controller-runtime `interceptor.NewClient`). Stack several by wrapping
 * again: the outermost runs first.
 */
export function interceptClient(inner: Client, interceptor: Interceptor): Client {
  return new InterceptedClient(inner, interceptor);
}

/**
 * The client {@link interceptClient} returns, as a class to extend: a wrapper that adds to a client (a call log,
 * write tracking) is an interceptor plus its own members, and every verb it does not intercept goes to `inner`
 * unchanged. `restMapper` is `inner`'s.
 */
export class InterceptedClient implements Client {
  readonly #c: Client;
  readonly #i: Interceptor;

  /** `inner` seen through `interceptor`; see {@link interceptClient}. */
  constructor(inner: Client, interceptor: Interceptor) {
    this.#c = inner;
    this.#i = interceptor;
  }

  /** The RESTMapper of the client below. */
  get restMapper(): RESTMapper {
    return this.#c.restMapper;
  }

  #fn<K extends keyof InterceptorFuncs>(verb: K, kind: Kind): InterceptorFuncs[K] | undefined {
    return funcFor(this.#i, verb, kind);
  }

  get<T extends O>(kind: Kind<T>, key: ObjectKey, options?: GetOptions): Promise<T> {
    const f = this.#fn('get', kind);
    return (f ? f.call(this.#i, this.#c, kind, key, options) : this.#c.get(kind, key, options)) as Promise<T>;
  }

  list<T extends O>(kind: Kind<T>, options?: ListOptions): Promise<ObjectList<T>> {
    const f = this.#fn('list', kind);
    return (f ? f.call(this.#i, this.#c, kind, options) : this.#c.list(kind, options)) as Promise<
      ObjectList<T>
    >;
  }

  create<T extends O>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    const f = this.#fn('create', kind);
    return (
      f ? f.call(this.#i, this.#c, kind, obj, options) : this.#c.create(kind, obj, options)
    ) as Promise<T>;
  }

  update<T extends O>(kind: Kind<T>, obj: T, options?: WriteOptions): Promise<T> {
    const f = this.#fn('update', kind);
    return (
      f ? f.call(this.#i, this.#c, kind, obj, options) : this.#c.update(kind, obj, options)
    ) as Promise<T>;
  }

  patch<T extends O>(kind: Kind<T>, key: ObjectKey, patch: Patch, options?: PatchOptions): Promise<T> {
    const f = this.#fn('patch', kind);
    return (
      f ? f.call(this.#i, this.#c, kind, key, patch, options) : this.#c.patch(kind, key, patch, options)
    ) as Promise<T>;
  }

  apply<T extends O>(kind: Kind<T>, config: ApplyConfiguration<T>, options?: ApplyOptions): Promise<T> {
    const f = this.#fn('apply', kind);
    return (
      f
        ? f.call(this.#i, this.#c, kind, config as ApplyConfiguration<O>, options)
        : this.#c.apply(kind, config, options)
    ) as Promise<T>;
  }

  delete<T extends O>(kind: Kind<T>, key: ObjectKey | T, options?: DeleteOptions): Promise<void> {
    const f = this.#fn('delete', kind);
    return f ? f.call(this.#i, this.#c, kind, key, options) : this.#c.delete(kind, key, options);
  }

  deleteAllOf<T extends O>(kind: Kind<T>, options?: DeleteAllOfOptions): Promise<void> {
    const f = this.#fn('deleteAllOf', kind);
    return f ? f.call(this.#i, this.#c, kind, options) : this.#c.deleteAllOf(kind, options);
  }

  watch<T extends O>(kind: Kind<T>, options?: WatchOptions): AsyncIterable<WatchEvent<T>> {
    const f = this.#fn('watch', kind);
    return (f ? f.call(this.#i, this.#c, kind, options) : this.#c.watch(kind, options)) as AsyncIterable<
      WatchEvent<T>
    >;
  }

  status(): StatusWriter {
    return this.subResource('status');
  }

  subResource(subResource: string): SubResourceClient {
    const inner = (): SubResourceClient =>
      subResource === 'status' ? (this.#c.status() as SubResourceClient) : this.#c.subResource(subResource);
    const c = this.#c;
    const i = this.#i;
    const fn = <K extends keyof InterceptorFuncs>(verb: K, kind: Kind) => funcFor(i, verb, kind);
    return {
      get<T extends O, S extends object = T>(kind: Kind<T>, key: ObjectKey, options?: GetOptions) {
        const f = fn('subResourceGet', kind);
        return (
          f ? f.call(i, c, subResource, kind, key, options) : inner().get(kind, key, options)
        ) as Promise<S>;
      },
      create<T extends O, S extends object>(kind: Kind<T>, obj: T, body: S, options?: WriteOptions) {
        const f = fn('subResourceCreate', kind);
        return (
          f ? f.call(i, c, subResource, kind, obj, body, options) : inner().create(kind, obj, body, options)
        ) as Promise<S>;
      },
      update<T extends O, S extends object = T>(
        kind: Kind<T>,
        obj: T,
        options?: SubResourceUpdateOptions<S>,
      ) {
        const f = fn('subResourceUpdate', kind);
        return (
          f
            ? f.call(i, c, subResource, kind, obj, options as SubResourceUpdateOptions<object>)
            : inner().update(kind, obj, options)
        ) as Promise<S>;
      },
      patch<T extends O, S extends object = T>(
        kind: Kind<T>,
        key: ObjectKey,
        patch: Patch,
        options?: PatchOptions,
      ) {
        const f = fn('subResourcePatch', kind);
        return (
          f ? f.call(i, c, subResource, kind, key, patch, options) : inner().patch(kind, key, patch, options)
        ) as Promise<S>;
      },
      apply<T extends O>(kind: Kind<T>, config: ApplyConfiguration<T>, options?: ApplyOptions) {
        const f = fn('subResourceApply', kind);
        return (
          f
            ? f.call(i, c, subResource, kind, config as ApplyConfiguration<O>, options)
            : inner().apply(kind, config, options)
        ) as Promise<T>;
      },
    };
  }
}
