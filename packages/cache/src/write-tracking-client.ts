/**
 * The writing side of read-your-own-writes: a {@link Client} that tells the cache's tracker about each write
 * and the resourceVersion the server returned for it.
 */
import type { Client, Kind, KubeObject, SubResourceClient } from '@kubeloop/client';
import { type Interceptor, interceptClient } from '@kubeloop/client/interceptor';

/** Starts a write of a kind; the returned function gets the object the server returned (nothing: failed). */
export type BeginWrite = (kind: Kind) => (written?: KubeObject) => void;

/**
 * Runs `write`, telling `begin` about it. `isObject` says whether the reply is the object itself (a
 * subresource such as `scale` replies with another object, whose resourceVersion is not one to wait for).
 */
async function tracked<R>(
  begin: BeginWrite,
  kind: Kind,
  write: () => Promise<R>,
  isObject: (r: R) => boolean = () => true,
): Promise<R> {
  const end = begin(kind);
  let written: KubeObject | undefined;
  try {
    const r = await write();
    if (isObject(r)) written = r as KubeObject;
    return r;
  } finally {
    end(written);
  }
}

/** A reply that is an object of `kind` (a subresource write that answers with the object, e.g. `status`). */
function isKindObject(kind: Kind) {
  return (r: unknown): boolean => {
    const k = (r as { kind?: unknown } | undefined)?.kind;
    return k === undefined || k === kind.kind;
  };
}

function subOf(c: Client, sub: string): SubResourceClient {
  return sub === 'status' ? (c.status() as SubResourceClient) : c.subResource(sub);
}

/** The interceptor that reports each write to `begin`; reads, deletes, watches and subresource creates pass. */
function writeTracker(begin: BeginWrite): Interceptor {
  return {
    create: (c, kind, obj, o) => tracked(begin, kind, () => c.create(kind, obj, o)),
    update: (c, kind, obj, o) => tracked(begin, kind, () => c.update(kind, obj, o)),
    patch: (c, kind, key, p, o) => tracked(begin, kind, () => c.patch(kind, key, p, o)),
    apply: (c, kind, cfg, o) => tracked(begin, kind, () => c.apply(kind, cfg, o)),
    subResourceUpdate: (c, sub, kind, obj, o) =>
      tracked(begin, kind, () => subOf(c, sub).update(kind, obj, o), isKindObject(kind)),
    subResourcePatch: (c, sub, kind, key, p, o) =>
      tracked(begin, kind, () => subOf(c, sub).patch(kind, key, p, o), isKindObject(kind)),
    subResourceApply: (c, sub, kind, cfg, o) => tracked(begin, kind, () => subOf(c, sub).apply(kind, cfg, o)),
  };
}

/**
 * `live` with every call going through; create, update, patch, apply and writes of the `status` subresource
 * (and of any subresource that answers with the object itself) are reported to `begin`. Deletes are not: they
 * return no resourceVersion here.
 */
export function trackingClient(live: Client, begin: BeginWrite): Client {
  return interceptClient(live, writeTracker(begin));
}
