/**
 * Server-side apply with apply configurations (controller-runtime `Client.Apply`, client-go
 * `applyconfigurations`): the body carries only the fields the caller set.
 */
import { InvalidRequestError } from './errors.js';
import type { Kind, KubeObject } from './kinds.js';
import type { CallOptions } from './options.js';

/** A partial object at any depth (arrays keep their element type, partial too). */
export type DeepPartial<T> = T extends readonly (infer E)[]
  ? DeepPartial<E>[]
  : T extends Date
    ? T | string
    : T extends object
      ? { [K in keyof T]?: DeepPartial<T[K]> | null }
      : T;

/**
 * An apply configuration: the object as the caller intends it, with only the fields they want to own.
 * `metadata.name` is required (and `metadata.namespace` for a namespaced kind).
 */
export type ApplyConfiguration<T extends KubeObject> = DeepPartial<T> & {
  metadata: { name: string; namespace?: string } & DeepPartial<NonNullable<T['metadata']>>;
};

/** Options of `client.apply` and `client.status().apply`. */
export interface ApplyOptions extends CallOptions {
  /** The field manager that will own the applied fields; falls back to the client's `fieldOwner`. Required. */
  readonly fieldManager?: string;
  /** Take ownership of fields another manager owns instead of failing with 409 Conflict. @defaultValue false */
  readonly force?: boolean;
  /** `dryRun=All`: validate, do not persist. */
  readonly dryRun?: boolean;
}

/** Metadata the server sets: never part of anyone's intent, so never sent in an apply body. */
const SERVER_SET_METADATA = [
  'managedFields',
  'creationTimestamp',
  'generation',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
] as const;

/**
 * Removes, at any depth, properties whose value is `undefined` or `null` (unset, not "set to null"), and
 * objects that held nothing but such properties (`{ creationTimestamp: null }` disappears). An object that
 * was empty to begin with is kept: `emptyDir: {}` means something. Nulls inside arrays are dropped too.
 * Returns a new value; the input is not changed.
 */
export function pruneUnset(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((v) => v !== null && v !== undefined).map(pruneUnset);
  // A Date (client-node's timestamp type) or bytes (Buffer, Uint8Array) is a value, not an object to walk (a
  // Date has no own keys: it was pruned into {} and sent as such).
  if (value === null || typeof value !== 'object' || value instanceof Date || ArrayBuffer.isView(value))
    return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || v === null) continue;
    const p = pruneUnset(v);
    if (isEmptyObject(p) && !isEmptyObject(v)) continue;
    out[k] = p;
  }
  return out;
}

function isEmptyObject(v: unknown): boolean {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    !(v instanceof Date) &&
    !ArrayBuffer.isView(v) &&
    Object.keys(v).length === 0
  );
}

/**
 * The body of a server-side apply for `kind`: `apiVersion`/`kind` from the descriptor, the configuration
 * pruned by {@link pruneUnset}, server-set metadata (`managedFields`, `creationTimestamp`, `generation`,
 * `selfLink`, `deletionTimestamp`, `deletionGracePeriodSeconds`) left out. `part: 'object'` drops `status`
 * (the main resource ignores it when the kind has a status subresource, and an empty one would still be
 * claimed); `part: 'status'` keeps only `metadata.name`/`namespace` and `status`.
 * @throws InvalidRequestError when `metadata.name` is missing.
 */
export function applyBody<T extends KubeObject>(
  kind: Kind<T>,
  config: ApplyConfiguration<T>,
  part: 'object' | 'status',
): KubeObject & Record<string, unknown> {
  const name = config?.metadata?.name;
  if (!name) throw new InvalidRequestError(`${kind.kind}: an apply configuration needs metadata.name`);
  const pruned = pruneUnset(config) as Record<string, unknown> & { metadata?: Record<string, unknown> };
  const metadata: Record<string, unknown> = { ...(pruned.metadata ?? {}) };
  for (const k of SERVER_SET_METADATA) delete metadata[k];
  if (part === 'status') {
    const ns = typeof metadata.namespace === 'string' ? metadata.namespace : undefined;
    return {
      apiVersion: kind.apiVersion,
      kind: kind.kind,
      metadata: { name, ...(ns ? { namespace: ns } : {}) },
      ...(pruned.status !== undefined && !isEmptyObject(pruned.status) ? { status: pruned.status } : {}),
    };
  }
  const { status: _status, ...rest } = pruned;
  return { ...rest, apiVersion: kind.apiVersion, kind: kind.kind, metadata };
}
