/**
 * Subresources (controller-runtime `SubResourceClient` / `StatusWriter`, `pkg/client/client.go`
 * `subResourceClient`): requests to `<object path>/<subresource>` — `status`, `scale`, `eviction`, `token`, …
 */

import { type ApplyConfiguration, type ApplyOptions, applyBody } from './apply.js';
import { InvalidRequestError } from './errors.js';
import type { SubResourceClient } from './interfaces.js';
import type { ClientInternals } from './internal/client-internals.js';
import { jsonBody } from './internal/json-body.js';
import { objectNamespaceUse } from './internal/request-mapping.js';
import { isMetadataOnly, type Kind, type KubeObject, type ObjectKey, objectKeyFromObject } from './kinds.js';
import type { GetOptions, Patch, PatchOptions, SubResourceUpdateOptions, WriteOptions } from './options.js';
import { preparePatch } from './patch-request.js';
import { checkPathSegment, objectPath, withQuery } from './paths.js';

/** The body kind of the create-style and own-body subresources the client knows. */
const SUBRESOURCE_BODY_KINDS: Readonly<Record<string, { apiVersion: string; kind: string }>> = {
  eviction: { apiVersion: 'policy/v1', kind: 'Eviction' },
  token: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest' },
  scale: { apiVersion: 'autoscaling/v1', kind: 'Scale' },
  binding: { apiVersion: 'v1', kind: 'Binding' },
};

/**
 * A client for one named subresource of any kind. Made by `client.subResource(name)` and
 * `client.status()`; every call is one request to `<object path>/<name>`.
 */
export class ApiSubResourceClient implements SubResourceClient {
  readonly #internals: ClientInternals;
  readonly #name: string;

  constructor(internals: ClientInternals, name: string) {
    if (!name) throw new InvalidRequestError(`subresource name ${JSON.stringify(name)} is not valid`);
    checkPathSegment('subresource', name);
    this.#internals = internals;
    this.#name = name;
  }

  /** The subresource's name (`'status'`, `'scale'`, …). */
  get name(): string {
    return this.#name;
  }

  /**
   * GET `<object>/<name>`: for `scale` an autoscaling/v1 `Scale`, for `status` the whole object.
   * @throws StatusError (NotFound for the object; a 404 naming no object when the kind has no such subresource), NoKindMatchError.
   */
  async get<T extends KubeObject, S extends object = T>(
    kind: Kind<T>,
    key: ObjectKey,
    options?: GetOptions,
  ): Promise<S> {
    const q = new URLSearchParams();
    if (options?.resourceVersion !== undefined) q.set('resourceVersion', options.resourceVersion);
    return this.#internals.request<S>(kind, objectNamespaceUse(kind, key), (m) => ({
      method: 'GET',
      path: withQuery(objectPath(m, key, this.#name), q),
      signal: options?.signal,
    }));
  }

  /**
   * POST `<object>/<name>` with `subResource` as the body (e.g. an `Eviction` for `eviction`, a
   * `TokenRequest` for `token`). `apiVersion`/`kind` of the body are filled in for the subresources the
   * client knows (`eviction`, `token`, `scale`, `binding`), and `metadata.name`/`namespace` from `obj`.
   * Resolves to the server's reply.
   * @throws StatusError (e.g. 429 TooManyRequests when an eviction would break a PodDisruptionBudget).
   */
  async create<T extends KubeObject, S extends object>(
    kind: Kind<T>,
    obj: T,
    subResource: S,
    options?: WriteOptions,
  ): Promise<S> {
    const key = objectKeyFromObject(obj);
    return this.#sendBody<S>('POST', kind, key, this.#withBodyMeta(key, subResource), options);
  }

  /**
   * PUT `<object>/<name>`: the object itself (for `status`: the server takes only `.status`, keeping spec
   * and metadata as stored), or `options.subResourceBody` (e.g. a `Scale`). Its `resourceVersion` is a
   * precondition. Resolves to the server's reply (the object, or the subresource body's kind).
   * @throws InvalidRequestError for a metadata-only kind; StatusError (`isConflict` on a stale resourceVersion).
   */
  async update<T extends KubeObject, S extends object = T>(
    kind: Kind<T>,
    obj: T,
    options?: SubResourceUpdateOptions<S>,
  ): Promise<S> {
    if (isMetadataOnly(kind) && !options?.subResourceBody)
      throw new InvalidRequestError(
        `${kind.kind}: cannot update the ${this.#name} of a metadata-only object`,
      );
    const key = objectKeyFromObject(obj);
    const body = options?.subResourceBody
      ? this.#withBodyMeta(key, options.subResourceBody)
      : { ...obj, apiVersion: kind.apiVersion, kind: kind.kind };
    return this.#sendBody<S>('PUT', kind, key, body, options);
  }

  /** POST or PUT `body` as JSON to `<object>/<name>`, with the write query (dry run, field manager). */
  #sendBody<S>(
    method: 'POST' | 'PUT',
    kind: Kind,
    key: ObjectKey,
    body: object,
    options: WriteOptions | undefined,
  ): Promise<S> {
    return this.#internals.request<S>(kind, objectNamespaceUse(kind, key), (m) => ({
      method,
      path: withQuery(objectPath(m, key, this.#name), this.#internals.writeQuery(options)),
      body: jsonBody(body),
      headers: { 'content-type': 'application/json' },
      signal: options?.signal,
    }));
  }

  /**
   * PATCH `<object>/<name>` with the Content-Type of `patch.type`. For `status` the server applies only the
   * `.status` part of the patch. Resolves to the server's reply (for `scale`, a `Scale`: pass it as `S`).
   * @throws InvalidRequestError (apply without a field manager; force without apply), StatusError.
   */
  async patch<T extends KubeObject, S extends object = T>(
    kind: Kind<T>,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<S> {
    const q = this.#internals.writeQuery(options);
    const contentType = preparePatch(patch, q, options);
    return this.#internals.request<S>(kind, objectNamespaceUse(kind, key), (m) => ({
      method: 'PATCH',
      path: withQuery(objectPath(m, key, this.#name), q),
      body: jsonBody(patch.data),
      headers: { 'content-type': contentType },
      signal: options?.signal,
    }));
  }

  /**
   * Server-side apply to `<object>/<name>` (for `status`: the apply configuration's `.status`; everything
   * but `apiVersion`, `kind`, `metadata.name`/`namespace` and `status` is left out of the body, so the
   * field manager owns only the status fields it set). Same body rules as `client.apply`.
   * @throws InvalidRequestError (no field manager, no name), StatusError (409 on conflicts unless `force`).
   */
  async apply<T extends KubeObject>(
    kind: Kind<T>,
    config: ApplyConfiguration<T>,
    options?: ApplyOptions,
  ): Promise<T> {
    const body = applyBody(kind, config, this.#name === 'status' ? 'status' : 'object');
    const key = objectKeyFromObject(body);
    return this.patch<T, T>(kind, key, { type: 'apply', data: body }, options);
  }

  #withBodyMeta(key: ObjectKey, body: object): object {
    const known = SUBRESOURCE_BODY_KINDS[this.#name];
    const b = body as KubeObject;
    return {
      ...(known ? { apiVersion: known.apiVersion, kind: known.kind } : {}),
      ...body,
      metadata: { name: key.name, ...(key.namespace ? { namespace: key.namespace } : {}), ...b.metadata },
    };
  }
}
