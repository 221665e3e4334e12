/**
 * Conformance of the fake client: every case runs once against `newFakeClient` (in-process, no sockets) and
 * once against envtest over HTTPS with the live client, and the two outcomes — objects, lists, errors, watch
 * events, with server-made values (uids, timestamps, resourceVersions) replaced by placeholders — must be
 * identical. Each case also checks the semantics it is about, so a case that broke on both sides fails too.
 */
import {
  type ApiClient,
  type Client,
  ConfigMap,
  Deployment,
  isConflict,
  type KubeObject,
  kind,
  Namespace,
  newClient,
  Pod,
  Secret,
  Service,
  StatusError,
} from '@kubeloop/client';
import { reasonForError } from '@kubeloop/client/errors';
import { Environment, type FaultInjector } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeClient, newFakeClient } from '../src/index.js';

interface Widget extends KubeObject {
  spec?: { replicas?: number; mode?: string; color?: string };
  status?: { ready?: boolean; observedGeneration?: number };
}
const Widget = kind<Widget>('conf.kubeloop.io/v1', 'Widget');
const widgetCrd: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.conf.kubeloop.io' },
  spec: {
    group: 'conf.kubeloop.io',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  replicas: { type: 'integer', minimum: 0 },
                  mode: { type: 'string', default: 'auto' },
                  color: { type: 'string', enum: ['red', 'blue'] },
                },
              },
              status: {
                type: 'object',
                properties: { ready: { type: 'boolean' }, observedGeneration: { type: 'integer' } },
              },
            },
          },
        },
      },
    ],
  },
} as KubeObject;

type Case = (c: Client, ns: string, faults: FaultInjector) => Promise<unknown>;

/** An outcome that compares across servers: errors by code, reason and message. */
async function outcome<T>(
  p: Promise<T>,
): Promise<T | { error: { code: number; reason: string; message: string } }> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof StatusError)
      return { error: { code: e.httpStatus, reason: reasonForError(e), message: e.message } };
    throw e;
  }
}

const PLACEHOLDER: Record<string, string> = {
  uid: '<uid>',
  creationTimestamp: '<time>',
  deletionTimestamp: '<time>',
  time: '<time>',
  resourceVersion: '<rv>',
  continue: '<continue>',
};

/**
 * Server-made values replaced by placeholders (present stays present, absent stays absent); numbers inside a
 * `message` too, because messages name resourceVersions, which differ between two servers with different
 * histories.
 */
function normalize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalize);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k in PLACEHOLDER && typeof x === 'string' && x !== '') out[k] = PLACEHOLDER[k];
    else if (k === 'message' && typeof x === 'string') out[k] = x.replace(/\b\d+\b/g, '<n>');
    else out[k] = normalize(x);
  }
  return out;
}

const cm = (
  ns: string,
  name: string,
  extra: Partial<KubeObject> & { data?: Record<string, string> } = {},
) => ({
  metadata: { namespace: ns, name, ...(extra.metadata ?? {}) },
  ...(extra.data ? { data: extra.data } : {}),
});
const widget = (ns: string, name: string, spec: Widget['spec'] = { replicas: 1 }): Widget => ({
  metadata: { namespace: ns, name },
  spec,
});
const deployment = (ns: string, name: string, replicas = 1) => ({
  metadata: { namespace: ns, name, labels: { app: name } },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'img:1' }] } },
  },
});
const names = (l: { items: KubeObject[] }) => l.items.map((o) => o.metadata?.name);
const rvNum = (o: KubeObject) => Number(o.metadata?.resourceVersion);

/** Reads watch events until `n` arrived (or the stream ends), then closes the watch. */
async function take(it: AsyncIterable<{ type: string; object: KubeObject }>, n: number, ac: AbortController) {
  const seen: Array<{ type: string; name: string | undefined }> = [];
  try {
    for await (const e of it) {
      seen.push({ type: e.type, name: e.object.metadata?.name });
      if (seen.length >= n) break;
    }
  } finally {
    ac.abort();
  }
  return seen;
}

const cases: Record<string, Case> = {
  // ---------------------------------------------------------------- create / get / basics
  'create sets uid, resourceVersion, creationTimestamp; generation on a CR': async (c, ns) => {
    const w = await c.create(Widget, widget(ns, 'w'));
    expect(w.metadata?.uid).toBeTruthy();
    expect(w.metadata?.generation).toBe(1);
    return w;
  },
  'create of an existing name is AlreadyExists': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'a'));
    const r = await outcome(c.create(ConfigMap, cm(ns, 'a')));
    expect(r).toMatchObject({ error: { code: 409, reason: 'AlreadyExists' } });
    return r;
  },
  'get of a missing object is NotFound': async (c, ns) => {
    const r = await outcome(c.get(ConfigMap, { namespace: ns, name: 'missing' }));
    expect(r).toMatchObject({ error: { code: 404, reason: 'NotFound' } });
    return r;
  },
  'create in a missing namespace is NotFound': async (c) => {
    const r = await outcome(c.create(ConfigMap, cm('no-such-namespace', 'a')));
    expect(r).toMatchObject({ error: { code: 404 } });
    return r;
  },
  'generateName makes a name with the prefix': async (c, ns) => {
    const o = await c.create(ConfigMap, { metadata: { namespace: ns, generateName: 'gen-' } });
    expect(o.metadata?.name).toMatch(/^gen-[a-z0-9]{5}$/);
    return { prefix: o.metadata?.name?.slice(0, 4), length: o.metadata?.name?.length };
  },
  'an invalid name is Invalid': async (c, ns) => {
    const r = await outcome(c.create(ConfigMap, cm(ns, 'Not_Valid')));
    expect(r).toMatchObject({ error: { code: 422, reason: 'Invalid' } });
    return r;
  },
  'a cluster-scoped kind: create and get a Namespace': async (c, ns) => {
    const n = await c.create(Namespace, { metadata: { name: `${ns}-x` } });
    const got = await c.get(Namespace, { name: `${ns}-x` });
    expect(got.metadata?.uid).toBe(n.metadata?.uid);
    return got;
  },
  // ---------------------------------------------------------------- update / conflicts
  'update with the current resourceVersion moves it': async (c, ns) => {
    const a = await c.create(ConfigMap, cm(ns, 'a', { data: { k: '1' } }));
    const b = await c.update(ConfigMap, { ...a, data: { k: '2' } });
    expect(rvNum(b)).toBeGreaterThan(rvNum(a));
    return b;
  },
  'update with a stale resourceVersion is Conflict': async (c, ns) => {
    const a = await c.create(ConfigMap, cm(ns, 'a', { data: { k: '1' } }));
    await c.update(ConfigMap, { ...a, data: { k: '2' } });
    const r = await outcome(c.update(ConfigMap, { ...a, data: { k: '3' } }));
    expect(r).toMatchObject({ error: { code: 409, reason: 'Conflict' } });
    return r;
  },
  'update without resourceVersion is an unconditional write (ConfigMap)': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'a', { data: { k: '1' } }));
    const r = await c.update(ConfigMap, cm(ns, 'a', { data: { k: '2' } }));
    expect(r.data).toEqual({ k: '2' });
    return r;
  },
  'update of a missing object is NotFound': async (c, ns) => {
    const r = await outcome(c.update(ConfigMap, cm(ns, 'missing')));
    expect(r).toMatchObject({ error: { code: 404 } });
    return r;
  },
  'an update that changes nothing keeps the resourceVersion': async (c, ns) => {
    const a = await c.create(ConfigMap, cm(ns, 'a', { data: { k: '1' } }));
    const b = await c.update(ConfigMap, a);
    expect(b.metadata?.resourceVersion).toBe(a.metadata?.resourceVersion);
    return b;
  },
  // ---------------------------------------------------------------- generation
  'generation moves on a spec change, not on a label change': async (c, ns) => {
    const a = await c.create(Widget, widget(ns, 'w'));
    const b = await c.update(Widget, { ...a, metadata: { ...a.metadata, labels: { x: 'y' } } });
    const d = await c.update(Widget, { ...b, spec: { ...b.spec, replicas: 3 } });
    expect([a.metadata?.generation, b.metadata?.generation, d.metadata?.generation]).toEqual([1, 1, 2]);
    return d;
  },
  'Deployment generation moves on a spec change': async (c, ns) => {
    const a = await c.create(Deployment, deployment(ns, 'd'));
    const b = await c.patch(
      Deployment,
      { namespace: ns, name: 'd' },
      { type: 'merge', data: { spec: { replicas: 4 } } },
    );
    expect(b.metadata?.generation).toBe((a.metadata?.generation ?? 0) + 1);
    return b;
  },
  // ---------------------------------------------------------------- status subresource
  'create drops status of a kind with a status subresource': async (c, ns) => {
    const w = await c.create(Widget, { ...widget(ns, 'w'), status: { ready: true } });
    expect(w.status).toBeUndefined();
    return w;
  },
  'update ignores status changes; the status writer keeps spec': async (c, ns) => {
    const a = await c.create(Widget, widget(ns, 'w'));
    const b = await c.update(Widget, { ...a, status: { ready: true } });
    expect(b.status).toBeUndefined();
    const s = await c.status().update(Widget, { ...b, spec: { replicas: 9 }, status: { ready: true } });
    expect(s.status).toEqual({ ready: true });
    expect(s.spec?.replicas).toBe(1);
    return s;
  },
  'a status write does not move generation': async (c, ns) => {
    const a = await c.create(Widget, widget(ns, 'w'));
    const s = await c.status().update(Widget, { ...a, status: { ready: true, observedGeneration: 1 } });
    expect(s.metadata?.generation).toBe(1);
    return s;
  },
  'status merge patch': async (c, ns) => {
    await c.create(Widget, widget(ns, 'w'));
    const s = await c
      .status()
      .patch(Widget, { namespace: ns, name: 'w' }, { type: 'merge', data: { status: { ready: false } } });
    return s;
  },
  'status update with a stale resourceVersion is Conflict': async (c, ns) => {
    const a = await c.create(Widget, widget(ns, 'w'));
    await c.update(Widget, { ...a, spec: { replicas: 2 } });
    const r = await outcome(c.status().update(Widget, { ...a, status: { ready: true } }));
    expect(r).toMatchObject({ error: { code: 409 } });
    return r;
  },
  'status of a kind without the subresource is NotFound (ConfigMap)': async (c, ns) => {
    const a = await c.create(ConfigMap, cm(ns, 'a'));
    const r = await outcome(c.status().update(ConfigMap, a));
    expect(r).toMatchObject({ error: { code: 404 } });
    return r;
  },
  'Deployment status through the status writer': async (c, ns) => {
    const a = await c.create(Deployment, deployment(ns, 'd'));
    const s = await c.status().update(Deployment, { ...a, status: { replicas: 1, observedGeneration: 1 } });
    expect(s.status).toMatchObject({ replicas: 1, observedGeneration: 1 });
    return s;
  },
  // ---------------------------------------------------------------- validation and defaulting
  'CRD schema defaulting fills spec.mode': async (c, ns) => {
    const w = await c.create(Widget, widget(ns, 'w', { replicas: 1 }));
    expect(w.spec?.mode).toBe('auto');
    return w;
  },
  'CRD schema validation refuses a value outside the enum': async (c, ns) => {
    const r = await outcome(c.create(Widget, widget(ns, 'w', { color: 'green' })));
    expect(r).toMatchObject({ error: { code: 422, reason: 'Invalid' } });
    return r;
  },
  'CRD schema validation refuses a wrong type': async (c, ns) => {
    const r = await outcome(c.create(Widget, widget(ns, 'w', { replicas: 'two' as unknown as number })));
    expect(r).toMatchObject({ error: { code: 422 } });
    return r;
  },
  'built-in defaulting: Deployment strategy, Service ClusterIP type': async (c, ns) => {
    const d = await c.create(Deployment, deployment(ns, 'd'));
    const s = await c.create(Service, {
      metadata: { namespace: ns, name: 's' },
      spec: { ports: [{ port: 80 }] },
    });
    expect(d.spec?.strategy?.type).toBe('RollingUpdate');
    return {
      strategy: d.spec?.strategy,
      revisionHistoryLimit: d.spec?.revisionHistoryLimit,
      type: s.spec?.type,
      ports: s.spec?.ports,
    };
  },
  'built-in validation: a Pod without containers is Invalid': async (c, ns) => {
    const r = await outcome(
      c.create(Pod, { metadata: { namespace: ns, name: 'p' }, spec: { containers: [] } }),
    );
    expect(r).toMatchObject({ error: { code: 422 } });
    return r;
  },
  'Secret stringData is folded into data': async (c, ns) => {
    const s = await c.create(Secret, { metadata: { namespace: ns, name: 's' }, stringData: { a: 'b' } });
    expect(s.data).toEqual({ a: Buffer.from('b').toString('base64') });
    return s;
  },
  // ---------------------------------------------------------------- patch
  'merge patch': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'a', { data: { k: '1', x: '1' } }));
    return c.patch(
      ConfigMap,
      { namespace: ns, name: 'a' },
      { type: 'merge', data: { data: { k: '2', x: null } } },
    );
  },
  'JSON patch': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'a', { data: { k: '1' } }));
    return c.patch(
      ConfigMap,
      { namespace: ns, name: 'a' },
      {
        type: 'json',
        data: [{ op: 'add', path: '/data/j', value: 'v' }],
      },
    );
  },
  'JSON patch test failure is refused': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'a', { data: { k: '1' } }));
    const r = await outcome(
      c.patch(
        ConfigMap,
        { namespace: ns, name: 'a' },
        { type: 'json', data: [{ op: 'test', path: '/data/k', value: 'no' }] },
      ),
    );
    expect(r).toHaveProperty('error');
    return r;
  },
  'strategic merge patch merges containers by name': async (c, ns) => {
    await c.create(Deployment, deployment(ns, 'd'));
    const d = await c.patch(
      Deployment,
      { namespace: ns, name: 'd' },
      {
        type: 'strategic',
        data: { spec: { template: { spec: { containers: [{ name: 'c', image: 'img:2' }] } } } },
      },
    );
    expect(d.spec?.template.spec?.containers).toHaveLength(1);
    return d.spec?.template.spec?.containers;
  },
  'strategic merge patch on a custom resource is UnsupportedMediaType': async (c, ns) => {
    await c.create(Widget, widget(ns, 'w'));
    const r = await c
      .patch(Widget, { namespace: ns, name: 'w' }, { type: 'strategic', data: { spec: { replicas: 2 } } })
      .then(
        () => 'ok',
        (e: Error) => e.name,
      );
    expect(r).not.toBe('ok');
    return r;
  },
  'patch of a missing object is NotFound': async (c, ns) => {
    const r = await outcome(
      c.patch(ConfigMap, { namespace: ns, name: 'x' }, { type: 'merge', data: { data: {} } }),
    );
    expect(r).toMatchObject({ error: { code: 404 } });
    return r;
  },
  // ---------------------------------------------------------------- server-side apply
  'apply creates, with an Apply managedFields entry': async (c, ns) => {
    const a = await c.apply(
      ConfigMap,
      { metadata: { namespace: ns, name: 'a' }, data: { k: '1' } },
      { fieldManager: 'me' },
    );
    expect(a.metadata?.managedFields?.[0]).toMatchObject({ manager: 'me', operation: 'Apply' });
    return a;
  },
  'apply of unchanged intent is a no-op': async (c, ns) => {
    const a = await c.apply(
      ConfigMap,
      { metadata: { namespace: ns, name: 'a' }, data: { k: '1' } },
      { fieldManager: 'me' },
    );
    const b = await c.apply(
      ConfigMap,
      { metadata: { namespace: ns, name: 'a' }, data: { k: '1' } },
      { fieldManager: 'me' },
    );
    expect(b.metadata?.resourceVersion).toBe(a.metadata?.resourceVersion);
    return b;
  },
  'apply conflicts with another manager, force takes over': async (c, ns) => {
    await c.apply(
      ConfigMap,
      { metadata: { namespace: ns, name: 'a' }, data: { k: '1' } },
      { fieldManager: 'one' },
    );
    const r = await outcome(
      c.apply(
        ConfigMap,
        { metadata: { namespace: ns, name: 'a' }, data: { k: '2' } },
        { fieldManager: 'two' },
      ),
    );
    expect(r).toMatchObject({ error: { code: 409, reason: 'Conflict' } });
    const forced = await c.apply(
      ConfigMap,
      { metadata: { namespace: ns, name: 'a' }, data: { k: '2' } },
      { fieldManager: 'two', force: true },
    );
    return { r, forced };
  },
  'apply removes fields the manager stopped applying': async (c, ns) => {
    await c.apply(
      ConfigMap,
      { metadata: { namespace: ns, name: 'a' }, data: { k: '1', x: '1' } },
      { fieldManager: 'me' },
    );
    const b = await c.apply(
      ConfigMap,
      { metadata: { namespace: ns, name: 'a' }, data: { k: '1' } },
      { fieldManager: 'me' },
    );
    expect(b.data).toEqual({ k: '1' });
    return b;
  },
  'update after apply records an Update manager': async (c, ns) => {
    const a = await c.apply(
      ConfigMap,
      { metadata: { namespace: ns, name: 'a' }, data: { k: '1' } },
      { fieldManager: 'me' },
    );
    const b = await c.update(ConfigMap, { ...a, data: { k: '1', u: '2' } }, { fieldManager: 'editor' });
    expect(b.metadata?.managedFields?.map((m) => m.manager)).toEqual(['me', 'editor']);
    return b.metadata?.managedFields;
  },
  'apply to the status subresource': async (c, ns) => {
    await c.create(Widget, widget(ns, 'w'));
    const s = await c
      .status()
      .apply(
        Widget,
        { metadata: { namespace: ns, name: 'w' }, status: { ready: true } },
        { fieldManager: 'ctl' },
      );
    expect(s.status).toEqual({ ready: true });
    return s.metadata?.managedFields;
  },
  'apply on a custom resource with defaulting': async (c, ns) => {
    const w = await c.apply(
      Widget,
      { metadata: { namespace: ns, name: 'w' }, spec: { replicas: 2 } },
      { fieldManager: 'me' },
    );
    expect(w.spec).toEqual({ replicas: 2, mode: 'auto' });
    return w;
  },
  // ---------------------------------------------------------------- labels and fields
  'label selector: equality, set-based, existence': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'a', { metadata: { labels: { tier: 'web', env: 'prod' } } as never }));
    await c.create(ConfigMap, cm(ns, 'b', { metadata: { labels: { tier: 'db' } } as never }));
    await c.create(ConfigMap, cm(ns, 'c'));
    const eq = names(await c.list(ConfigMap, { namespace: ns, labelSelector: 'tier=web' }));
    const inSet = names(await c.list(ConfigMap, { namespace: ns, labelSelector: 'tier in (web,db)' }));
    const exists = names(await c.list(ConfigMap, { namespace: ns, labelSelector: '!tier' }));
    const ne = names(await c.list(ConfigMap, { namespace: ns, labelSelector: 'tier!=web' }));
    expect(eq).toEqual(['a']);
    return { eq, inSet, exists, ne };
  },
  'label selector as an object (matchExpressions)': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'a', { metadata: { labels: { tier: 'web' } } as never }));
    await c.create(ConfigMap, cm(ns, 'b', { metadata: { labels: { tier: 'db' } } as never }));
    return names(
      await c.list(ConfigMap, {
        namespace: ns,
        labelSelector: { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] },
      }),
    );
  },
  'an unparsable label selector is BadRequest': async (c, ns) => {
    const r = await c.list(ConfigMap, { namespace: ns, labelSelector: 'a in (' }).then(
      () => 'ok',
      (e: Error) => e.name,
    );
    expect(r).not.toBe('ok');
    return r;
  },
  'field selector metadata.name without an index': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'a'));
    await c.create(ConfigMap, cm(ns, 'b'));
    const l = names(await c.list(ConfigMap, { namespace: ns, fieldSelector: 'metadata.name=b' }));
    const notL = names(await c.list(ConfigMap, { namespace: ns, fieldSelector: { 'metadata.name': 'a' } }));
    expect(l).toEqual(['b']);
    return { l, notL };
  },
  'field selector on a Pod field (spec.nodeName, status.phase)': async (c, ns) => {
    const spec = { containers: [{ name: 'c', image: 'i' }] };
    await c.create(Pod, { metadata: { namespace: ns, name: 'on-n1' }, spec: { ...spec, nodeName: 'n1' } });
    await c.create(Pod, { metadata: { namespace: ns, name: 'nowhere' }, spec });
    const onN1 = names(await c.list(Pod, { namespace: ns, fieldSelector: 'spec.nodeName=n1' }));
    const unscheduled = names(await c.list(Pod, { namespace: ns, fieldSelector: 'spec.nodeName=' }));
    const pending = names(await c.list(Pod, { namespace: ns, fieldSelector: 'status.phase=Pending' }));
    expect(onN1).toEqual(['on-n1']);
    return { onN1, unscheduled, pending };
  },
  'a field selector on an unsupported field is BadRequest': async (c, ns) => {
    const r = await outcome(c.list(ConfigMap, { namespace: ns, fieldSelector: 'data.k=1' }));
    expect(r).toMatchObject({ error: { code: 400 } });
    return r;
  },
  'field selector metadata.namespace across namespaces': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'a'));
    const l = await c.list(ConfigMap, { fieldSelector: `metadata.namespace=${ns}` });
    return names(l);
  },
  // ---------------------------------------------------------------- lists and paging
  'list is sorted by name and carries a resourceVersion': async (c, ns) => {
    for (const n of ['c', 'a', 'b']) await c.create(ConfigMap, cm(ns, n));
    const l = await c.list(ConfigMap, { namespace: ns });
    expect(names(l)).toEqual(['a', 'b', 'c']);
    expect(l.metadata?.resourceVersion).toBeTruthy();
    return l;
  },
  'paging with limit and continue': async (c, ns) => {
    for (const n of ['a', 'b', 'c', 'd', 'e']) await c.create(ConfigMap, cm(ns, n));
    const p1 = await c.list(ConfigMap, { namespace: ns, limit: 2 });
    const p2 = await c.list(ConfigMap, {
      namespace: ns,
      limit: 2,
      continue: p1.metadata?.continue as string,
    });
    const p3 = await c.list(ConfigMap, {
      namespace: ns,
      limit: 2,
      continue: p2.metadata?.continue as string,
    });
    expect([...names(p1), ...names(p2), ...names(p3)]).toEqual(['a', 'b', 'c', 'd', 'e']);
    return {
      pages: [names(p1), names(p2), names(p3)],
      remaining: [p1.metadata?.remainingItemCount, p2.metadata?.remainingItemCount],
      last: p3.metadata?.continue ?? null,
    };
  },
  'a continue token stays consistent with its snapshot': async (c, ns) => {
    for (const n of ['a', 'b', 'c']) await c.create(ConfigMap, cm(ns, n));
    const p1 = await c.list(ConfigMap, { namespace: ns, limit: 1 });
    await c.create(ConfigMap, cm(ns, 'bb'));
    const rest = await c.list(ConfigMap, { namespace: ns, continue: p1.metadata?.continue as string });
    return names(rest);
  },
  'a malformed continue token is refused': async (c, ns) => {
    const r = await outcome(c.list(ConfigMap, { namespace: ns, continue: 'garbage' }));
    expect(r).toHaveProperty('error');
    return r;
  },
  // ---------------------------------------------------------------- delete, finalizers, deleteAllOf
  'delete removes an object without finalizers': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'a'));
    await c.delete(ConfigMap, { namespace: ns, name: 'a' });
    return outcome(c.get(ConfigMap, { namespace: ns, name: 'a' }));
  },
  'delete of a missing object is NotFound': async (c, ns) => {
    const r = await outcome(c.delete(ConfigMap, { namespace: ns, name: 'missing' }));
    expect(r).toMatchObject({ error: { code: 404 } });
    return r;
  },
  'finalizers keep a deleted object with a deletionTimestamp': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'a', { metadata: { finalizers: ['example.com/f'] } as never }));
    await c.delete(ConfigMap, { namespace: ns, name: 'a' });
    const o = await c.get(ConfigMap, { namespace: ns, name: 'a' });
    expect(o.metadata?.deletionTimestamp).toBeTruthy();
    return o;
  },
  'removing the last finalizer of a deleted object deletes it': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'a', { metadata: { finalizers: ['example.com/f'] } as never }));
    await c.delete(ConfigMap, { namespace: ns, name: 'a' });
    const o = await c.get(ConfigMap, { namespace: ns, name: 'a' });
    await c.update(ConfigMap, { ...o, metadata: { ...o.metadata, finalizers: [] } });
    return outcome(c.get(ConfigMap, { namespace: ns, name: 'a' }));
  },
  'a new finalizer cannot be added to a deleted object': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'a', { metadata: { finalizers: ['example.com/f'] } as never }));
    await c.delete(ConfigMap, { namespace: ns, name: 'a' });
    const o = await c.get(ConfigMap, { namespace: ns, name: 'a' });
    const r = await outcome(
      c.update(ConfigMap, {
        ...o,
        metadata: { ...o.metadata, finalizers: ['example.com/f', 'example.com/g'] },
      }),
    );
    expect(r).toMatchObject({ error: { code: 422 } });
    return r;
  },
  'delete with a stale resourceVersion precondition is Conflict': async (c, ns) => {
    const a = await c.create(ConfigMap, cm(ns, 'a', { data: { k: '1' } }));
    await c.update(ConfigMap, { ...a, data: { k: '2' } });
    const r = await outcome(
      c.delete(
        ConfigMap,
        { namespace: ns, name: 'a' },
        { preconditions: { resourceVersion: a.metadata?.resourceVersion as string } },
      ),
    );
    expect(r).toMatchObject({ error: { code: 409 } });
    return r;
  },
  'deleteAllOf by label selector': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'a', { metadata: { labels: { gone: 'yes' } } as never }));
    await c.create(ConfigMap, cm(ns, 'b', { metadata: { labels: { gone: 'yes' } } as never }));
    await c.create(ConfigMap, cm(ns, 'c'));
    await c.deleteAllOf(ConfigMap, { namespace: ns, labelSelector: 'gone=yes' });
    const left = names(await c.list(ConfigMap, { namespace: ns }));
    expect(left).toEqual(['c']);
    return left;
  },
  'deleteAllOf by field selector, finalizers respected': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'a', { metadata: { finalizers: ['example.com/f'] } as never }));
    await c.create(ConfigMap, cm(ns, 'b'));
    await c.deleteAllOf(ConfigMap, { namespace: ns, fieldSelector: `metadata.namespace=${ns}` });
    const l = await c.list(ConfigMap, { namespace: ns });
    expect(names(l)).toEqual(['a']);
    return l.items.map((o) => ({
      name: o.metadata?.name,
      terminating: Boolean(o.metadata?.deletionTimestamp),
    }));
  },
  // ---------------------------------------------------------------- dryRun
  'dryRun create stores nothing': async (c, ns) => {
    const o = await c.create(ConfigMap, cm(ns, 'a', { data: { k: '1' } }), { dryRun: true });
    const r = await outcome(c.get(ConfigMap, { namespace: ns, name: 'a' }));
    expect(r).toMatchObject({ error: { code: 404 } });
    return { o, r };
  },
  'dryRun update and delete change nothing': async (c, ns) => {
    const a = await c.create(ConfigMap, cm(ns, 'a', { data: { k: '1' } }));
    const u = await c.update(ConfigMap, { ...a, data: { k: '2' } }, { dryRun: true });
    await c.delete(ConfigMap, { namespace: ns, name: 'a' }, { dryRun: true });
    const after = await c.get(ConfigMap, { namespace: ns, name: 'a' });
    expect(after.data).toEqual({ k: '1' });
    return { u: u.data, after };
  },
  'dryRun still validates': async (c, ns) => {
    const r = await outcome(c.create(Widget, widget(ns, 'w', { color: 'green' }), { dryRun: true }));
    expect(r).toMatchObject({ error: { code: 422 } });
    return r;
  },
  // ---------------------------------------------------------------- watch
  'watch: ADDED, MODIFIED, DELETED in order': async (c, ns) => {
    const ac = new AbortController();
    const start = await c.list(ConfigMap, { namespace: ns });
    const events = take(
      c.watch(ConfigMap, {
        namespace: ns,
        resourceVersion: start.metadata?.resourceVersion,
        signal: ac.signal,
      }),
      3,
      ac,
    );
    const a = await c.create(ConfigMap, cm(ns, 'a'));
    await c.update(ConfigMap, { ...a, data: { k: 'v' } });
    await c.delete(ConfigMap, { namespace: ns, name: 'a' });
    const seen = await events;
    expect(seen.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    return seen;
  },
  'watch without a resourceVersion starts with the current objects': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'x'));
    await c.create(ConfigMap, cm(ns, 'y'));
    const ac = new AbortController();
    return take(c.watch(ConfigMap, { namespace: ns, signal: ac.signal }), 2, ac);
  },
  'watch with a label selector: an object leaving the selection is DELETED': async (c, ns) => {
    const ac = new AbortController();
    const start = await c.list(ConfigMap, { namespace: ns });
    const events = take(
      c.watch(ConfigMap, {
        namespace: ns,
        labelSelector: 'w=1',
        resourceVersion: start.metadata?.resourceVersion,
        signal: ac.signal,
      }),
      2,
      ac,
    );
    const a = await c.create(ConfigMap, cm(ns, 'a', { metadata: { labels: { w: '1' } } as never }));
    await c.create(ConfigMap, cm(ns, 'other'));
    await c.update(ConfigMap, { ...a, metadata: { ...a.metadata, labels: { w: '2' } } });
    return events;
  },
  'watch with a field selector': async (c, ns) => {
    const ac = new AbortController();
    const start = await c.list(ConfigMap, { namespace: ns });
    const events = take(
      c.watch(ConfigMap, {
        namespace: ns,
        fieldSelector: 'metadata.name=b',
        resourceVersion: start.metadata?.resourceVersion,
        signal: ac.signal,
      }),
      1,
      ac,
    );
    await c.create(ConfigMap, cm(ns, 'a'));
    await c.create(ConfigMap, cm(ns, 'b'));
    return events;
  },
  'watch of a status change on a CR is MODIFIED': async (c, ns) => {
    const a = await c.create(Widget, widget(ns, 'w'));
    const ac = new AbortController();
    const events = take(
      c.watch(Widget, { namespace: ns, resourceVersion: a.metadata?.resourceVersion, signal: ac.signal }),
      1,
      ac,
    );
    await c.status().update(Widget, { ...a, status: { ready: true } });
    return events;
  },
  'an injected expire rule: the watch gets one ERROR event with 410 Expired': async (c, ns, faults) => {
    const rule = faults.expire({ match: { verb: 'watch', resource: 'configmaps', namespace: ns }, times: 1 });
    const ac = new AbortController();
    const seen: unknown[] = [];
    try {
      for await (const e of c.watch(ConfigMap, { namespace: ns, resourceVersion: '1', signal: ac.signal })) {
        seen.push({ type: e.type, object: e.object });
        if (e.type === 'ERROR') break;
      }
    } catch (err) {
      seen.push(
        err instanceof StatusError ? { code: err.httpStatus, reason: reasonForError(err) } : String(err),
      );
    } finally {
      ac.abort();
      rule.clear();
    }
    expect(JSON.stringify(seen)).toContain('Expired');
    return seen;
  },
  'an injected 503 on create reaches the caller': async (c, ns, faults) => {
    const rule = faults.failRequests({
      match: { verb: 'create', resource: 'configmaps', namespace: ns },
      status: 503,
      times: 1,
    });
    const r = await outcome(c.create(ConfigMap, cm(ns, 'a')));
    rule.clear();
    const after = await outcome(c.create(ConfigMap, cm(ns, 'a')));
    expect(r).toMatchObject({ error: { code: 503 } });
    return { r, after: (after as KubeObject).metadata?.name };
  },
  'watch with bookmarks and sendInitialEvents ends the initial list with a bookmark': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'a'));
    const ac = new AbortController();
    const seen: Array<{ type: string; annotations?: unknown }> = [];
    try {
      for await (const e of c.watch(ConfigMap, {
        namespace: ns,
        sendInitialEvents: true,
        resourceVersionMatch: 'NotOlderThan',
        allowWatchBookmarks: true,
        signal: ac.signal,
      })) {
        seen.push({ type: e.type, annotations: (e.object as KubeObject).metadata?.annotations });
        if (e.type === 'BOOKMARK') break;
      }
    } finally {
      ac.abort();
    }
    expect(seen.map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK']);
    return seen;
  },
  // ---------------------------------------------------------------- metadata-level semantics
  'ownerReferences are kept; uid checked only by the GC': async (c, ns) => {
    const owner = await c.create(ConfigMap, cm(ns, 'owner'));
    const dep = await c.create(ConfigMap, {
      metadata: {
        namespace: ns,
        name: 'dep',
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            name: 'owner',
            uid: owner.metadata?.uid as string,
            controller: true,
          },
        ],
      },
    });
    return dep.metadata?.ownerReferences?.map((r) => ({ ...r, uid: r.uid === owner.metadata?.uid }));
  },
  'two controller owner references are Invalid': async (c, ns) => {
    const ref = (name: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name,
      uid: `uid-${name}`,
      controller: true,
    });
    const r = await outcome(
      c.create(ConfigMap, {
        metadata: { namespace: ns, name: 'dep', ownerReferences: [ref('a'), ref('b')] },
      }),
    );
    expect(r).toMatchObject({ error: { code: 422 } });
    return r;
  },
  'a label value that is too long is Invalid': async (c, ns) => {
    const r = await outcome(
      c.create(ConfigMap, cm(ns, 'a', { metadata: { labels: { k: 'x'.repeat(64) } } as never })),
    );
    expect(r).toMatchObject({ error: { code: 422 } });
    return r;
  },
  'metadata-only get (PartialObjectMetadata)': async (c, ns) => {
    await c.create(ConfigMap, cm(ns, 'a', { data: { secret: 'x' } }));
    const { metadataOnly } = await import('@kubeloop/client');
    const m = await c.get(metadataOnly(ConfigMap), { namespace: ns, name: 'a' });
    expect((m as { data?: unknown }).data).toBeUndefined();
    return m;
  },
  'scale subresource of a Deployment': async (c, ns) => {
    await c.create(Deployment, deployment(ns, 'd', 2));
    const s = await c.subResource('scale').get(Deployment, { namespace: ns, name: 'd' });
    return s;
  },
  'a CRD appears in discovery: the RESTMapper resolves it': async (c) => {
    const m = await c.restMapper.restMapping({ group: 'conf.kubeloop.io', version: 'v1', kind: 'Widget' });
    return { resource: m.resource, scope: m.scope };
  },
  'conflict on concurrent updates: exactly one of two wins': async (c, ns) => {
    const a = await c.create(ConfigMap, cm(ns, 'a', { data: { k: '0' } }));
    const results = await Promise.allSettled([
      c.update(ConfigMap, { ...a, data: { k: '1' } }),
      c.update(ConfigMap, { ...a, data: { k: '2' } }),
    ]);
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    const conflicts = results.filter((r) => r.status === 'rejected' && isConflict(r.reason)).length;
    expect([ok, conflicts]).toEqual([1, 1]);
    return { ok, conflicts };
  },
};

describe('fake client conformance: the same cases against newFakeClient and envtest over HTTPS', () => {
  let env: Environment;
  let http: ApiClient;
  let fake: FakeClient;
  let n = 0;

  beforeAll(async () => {
    // the embedded server whatever the environment says: this compares the fake with envtest itself
    env = new Environment({ useExistingCluster: false, env: {}, crds: [widgetCrd as never] });
    await env.start();
    http = newClient(env.config);
    fake = await newFakeClient({ objects: [widgetCrd], userAgent: env.config.userAgent });
  });
  afterAll(async () => {
    await http?.close();
    await env?.stop();
    await fake?.close();
  });

  it('has at least 50 cases', () => {
    expect(Object.keys(cases).length).toBeGreaterThanOrEqual(50);
  });

  for (const [name, run] of Object.entries(cases)) {
    it(name, async () => {
      // the same namespace name on both servers, so messages naming it compare equal
      const ns = `conf-${++n}`;
      await fake.create(Namespace, { metadata: { name: ns } });
      await http.create(Namespace, { metadata: { name: ns } });
      const viaFake = normalize(await run(fake, ns, fake.faults));
      const viaHttp = normalize(await run(http, ns, env.server!.faults));
      expect(viaFake).toEqual(viaHttp);
    });
  }
});
