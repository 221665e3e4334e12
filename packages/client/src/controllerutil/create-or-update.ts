/**
 * controller-runtime `controllerutil.CreateOrUpdate` and `CreateOrPatch`: read the object, let `mutate`
 * shape it, and write only when `mutate` changed something compared with the object as read — so fields
 * the server defaulted never cause a write on every reconcile (case C30).
 */
import { InvalidRequestError, isNotFound } from '../errors.js';
import type { CacheReader, Reader, StatusClient, Writer } from '../interfaces.js';
import type { Kind, KubeObject, ObjectKey } from '../kinds.js';
import type { CallOptions } from '../options.js';
import { createMergePatch, isUnchanged, withReadValues } from './equality.js';

/**
 * What createOrUpdate / createOrPatch did: `created`, `updated` (the object without its status),
 * `updatedStatus` (the object and then its status), `updatedStatusOnly`, or `unchanged` (no write).
 */
export type OperationResult = 'unchanged' | 'created' | 'updated' | 'updatedStatus' | 'updatedStatusOnly';

/**
 * Shapes the object in place: set the fields you own, leave the rest as read. It receives a private copy
 * (the object as read, or a new `{ metadata: { name, namespace } }`). A property set to `undefined` counts
 * as "not set": the value as read is kept, by createOrUpdate's PUT as by createOrPatch's patch (so a typed
 * builder that spells out `field: undefined` does not reset what the server defaulted — Go's zero value
 * cannot say "not set", JavaScript's `undefined` can); `delete` it or set `null` to clear it. Changing
 * `metadata.name` or `metadata.namespace` is an error.
 */
export type MutateFn<T> = (obj: T) => void | Promise<void>;

/** Options of createOrUpdate / createOrPatch. */
export interface CreateOrUpdateOptions extends CallOptions {
  /** Field manager of the writes. */
  readonly fieldManager?: string;
  /** `dryRun=All` on the writes. */
  readonly dryRun?: boolean;
}

/** What createOrUpdate / createOrPatch resolve to: the result and the object as the server last answered (or as read when unchanged). */
export interface CreateOrUpdateResult<T> {
  readonly result: OperationResult;
  readonly object: T;
}

/** A reader of the live API server or of an informer cache (the manager's client): both work. */
type AnyReader = Pick<Reader, 'get'> | Pick<CacheReader, 'get'>;
type CrudClient = AnyReader & Pick<Writer, 'create' | 'update'>;
type PatchClient = AnyReader & Pick<Writer, 'create' | 'patch'> & StatusClient;

function keyOf(keyOrObj: ObjectKey | KubeObject): ObjectKey {
  if ('metadata' in keyOrObj && keyOrObj.metadata) {
    const m = keyOrObj.metadata;
    return m.namespace ? { namespace: m.namespace, name: m.name ?? '' } : { name: m.name ?? '' };
  }
  return keyOrObj as ObjectKey;
}

function initialObject<T extends KubeObject>(kind: Kind<T>, keyOrObj: ObjectKey | T, key: ObjectKey): T {
  if ('metadata' in keyOrObj && keyOrObj.metadata) return structuredClone(keyOrObj) as T;
  return {
    apiVersion: kind.apiVersion,
    kind: kind.kind,
    metadata: { name: key.name, ...(key.namespace ? { namespace: key.namespace } : {}) },
  } as T;
}

async function mutateChecked<T extends KubeObject>(
  kind: Kind,
  key: ObjectKey,
  obj: T,
  mutate: MutateFn<T>,
): Promise<void> {
  await mutate(obj);
  const name = obj.metadata?.name ?? '';
  const ns = obj.metadata?.namespace ?? '';
  if (name !== key.name || ns !== (key.namespace ?? ''))
    throw new InvalidRequestError(
      `${kind.kind} ${key.namespace ? `${key.namespace}/` : ''}${key.name}: mutate cannot change the object's name or namespace (now ${ns ? `${ns}/` : ''}${name})`,
    );
}

/**
 * The half createOrUpdate and createOrPatch share: read the object; when it does not exist, mutate a new
 * one and create it (the finished result); otherwise a mutated copy and the object as read, or the
 * `unchanged` result when `mutate` asked for nothing new.
 */
async function readAndMutate<T extends KubeObject>(
  client: AnyReader & Pick<Writer, 'create'>,
  kind: Kind<T>,
  keyOrObj: ObjectKey | T,
  mutate: MutateFn<T>,
  options: CreateOrUpdateOptions,
): Promise<CreateOrUpdateResult<T> | { readonly key: ObjectKey; readonly current: T; readonly desired: T }> {
  const key = keyOf(keyOrObj);
  const current = await read(client, kind, key, options);
  if (!current) {
    const obj = initialObject(kind, keyOrObj, key);
    await mutateChecked(kind, key, obj, mutate);
    return { result: 'created', object: await client.create(kind, obj, writeOptions(options)) };
  }
  const desired = structuredClone(current) as T;
  await mutateChecked(kind, key, desired, mutate);
  if (isUnchanged(current, desired)) return { result: 'unchanged', object: current };
  return { key, current, desired };
}

/** Reads the object; undefined when it does not exist. */
async function read<T extends KubeObject>(
  client: AnyReader,
  kind: Kind<T>,
  key: ObjectKey,
  options: CreateOrUpdateOptions,
): Promise<T | undefined> {
  if (!key.name) throw new InvalidRequestError(`${kind.kind}: createOrUpdate needs a name`);
  try {
    // a cached object is read-only: it is only compared with, and mutate gets a structuredClone of it
    return (await (client as Pick<Reader, 'get'>).get(
      kind,
      key,
      options.signal ? { signal: options.signal } : {},
    )) as T;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

function writeOptions(o: CreateOrUpdateOptions) {
  return {
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.fieldManager ? { fieldManager: o.fieldManager } : {}),
    ...(o.dryRun ? { dryRun: true } : {}),
  };
}

/**
 * Creates the object named by `keyOrObj` or updates it (PUT) so that `mutate` holds (controller-runtime
 * `CreateOrUpdate`). Get → not found: mutate a new object (or a copy of `keyOrObj` when it is an object)
 * and create it → `created`. Found: mutate a copy; when it asks for nothing the object as read does not
 * already have ({@link MutateFn}; key order, `undefined`, `null` vs absent and `[]` vs absent do not count),
 * `unchanged` without any write; otherwise update with the read resourceVersion → `updated`. Status changes
 * are not written (the main resource ignores `.status`; use createOrPatch). Reads go to `client.get`: with
 * a cache-backed client, a stale read ends in a 409 Conflict — wrap in `retryOnConflict` if needed.
 * @throws InvalidRequestError when `mutate` changed the name or namespace (before any write), StatusError (e.g. 409 Conflict), NoKindMatchError.
 */
export async function createOrUpdate<T extends KubeObject>(
  client: CrudClient,
  kind: Kind<T>,
  keyOrObj: ObjectKey | T,
  mutate: MutateFn<T>,
  options: CreateOrUpdateOptions = {},
): Promise<CreateOrUpdateResult<T>> {
  const step = await readAndMutate(client, kind, keyOrObj, mutate, options);
  if ('result' in step) return step;
  // A property mutate set to `undefined` keeps its value as read (MutateFn), in the PUT body as well.
  const body = withReadValues(step.current, step.desired);
  return { result: 'updated', object: await client.update(kind, body, writeOptions(options)) };
}

/**
 * Like {@link createOrUpdate}, but writes with JSON merge patches (controller-runtime `CreateOrPatch`): one
 * patch of what `mutate` changed outside `.status` (→ `updated`), then one merge patch of `.status` through
 * the status subresource when the status changed (→ `updatedStatus`, or `updatedStatusOnly` when only the
 * status changed). Patches carry only the changed fields, so concurrent edits of other fields are kept; they
 * carry no resourceVersion. On create the status `mutate` set is not written (as upstream).
 * @throws InvalidRequestError when `mutate` changed the name or namespace (before any write), StatusError, NoKindMatchError.
 */
export async function createOrPatch<T extends KubeObject>(
  client: PatchClient,
  kind: Kind<T>,
  keyOrObj: ObjectKey | T,
  mutate: MutateFn<T>,
  options: CreateOrUpdateOptions = {},
): Promise<CreateOrUpdateResult<T>> {
  const step = await readAndMutate(client, kind, keyOrObj, mutate, options);
  if ('result' in step) return step;
  const { key, current } = step;
  const { status: beforeStatus, ...before } = current as T & { status?: unknown };
  const { status: afterStatus, ...after } = step.desired as T & { status?: unknown };
  let result: OperationResult = 'unchanged';
  let object = current;
  const patch = createMergePatch(before, after);
  if (Object.keys(patch).length) {
    object = await client.patch(kind, key, { type: 'merge', data: patch }, writeOptions(options));
    result = 'updated';
  }
  if (afterStatus !== undefined && !isUnchanged(beforeStatus, afterStatus)) {
    const statusPatch = createMergePatch({ status: beforeStatus ?? {} }, { status: afterStatus });
    object = await client
      .status()
      .patch(kind, key, { type: 'merge', data: statusPatch }, writeOptions(options));
    result = result === 'updated' ? 'updatedStatus' : 'updatedStatusOnly';
  }
  return { result, object };
}
