import {
  ConfigMap,
  isConflict,
  isNotFound,
  type KubeObject,
  Namespace,
  Pod,
  StatusError,
} from '@kubeloop/client';
import { createInProcessApiServer } from '@kubeloop/envtest';
import { describe, expect, it } from 'vitest';
import { newFakeClient } from '../src/index.js';

const cmObj = (ns: string, name: string, data: Record<string, string> = {}): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: ns, name }, data }) as KubeObject;

describe('newFakeClient', () => {
  it('seeds objects through the API: missing namespaces made, status written, terminating objects kept', async () => {
    const fake = await newFakeClient({
      objects: [
        cmObj('team-a', 'one', { k: 'v' }),
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { namespace: 'team-a', name: 'p' },
          spec: { containers: [{ name: 'c', image: 'i' }] },
          status: { phase: 'Running' },
        } as KubeObject,
        {
          ...cmObj('team-a', 'going'),
          metadata: {
            namespace: 'team-a',
            name: 'going',
            finalizers: ['x/y'],
            deletionTimestamp: '2020-01-01T00:00:00Z' as never,
          },
        },
      ],
    });
    try {
      expect((await fake.get(Namespace, { name: 'team-a' })).metadata?.uid).toBeTruthy();
      const one = await fake.get(ConfigMap, { namespace: 'team-a', name: 'one' });
      expect(one.data).toEqual({ k: 'v' });
      expect(one.metadata?.uid).toBeTruthy();
      expect((await fake.get(Pod, { namespace: 'team-a', name: 'p' })).status?.phase).toBe('Running');
      expect(
        (await fake.get(ConfigMap, { namespace: 'team-a', name: 'going' })).metadata?.deletionTimestamp,
      ).toBeTruthy();
      // the seeding is not in the logs
      expect(fake.writes()).toEqual([]);
      expect(fake.requests({ verb: 'create' })).toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it('names the bad seed object', async () => {
    await expect(newFakeClient({ objects: [{ metadata: { name: 'x' } } as KubeObject] })).rejects.toThrow(
      /objects\[0\]: apiVersion and kind are required/,
    );
    await expect(
      newFakeClient({
        objects: [
          {
            ...cmObj('default', 'x'),
            metadata: { namespace: 'default', name: 'x', deletionTimestamp: 'now' as never },
          },
        ],
      }),
    ).rejects.toThrow(/deletionTimestamp but no finalizers/);
  });

  it('logs calls with what they sent and came to; writes() keeps the writes', async () => {
    const fake = await newFakeClient({ objects: [cmObj('default', 'a')] });
    try {
      await fake.get(ConfigMap, { namespace: 'default', name: 'a' });
      await fake.create(ConfigMap, { metadata: { namespace: 'default', name: 'b' } });
      await fake.get(ConfigMap, { namespace: 'default', name: 'nope' }).catch(() => undefined);
      await fake.patch(
        ConfigMap,
        { namespace: 'default', name: 'b' },
        { type: 'merge', data: { data: { x: '1' } } },
      );
      const calls = fake.calls();
      expect(calls.map((c) => [c.verb, c.name, c.done])).toEqual([
        ['get', 'a', true],
        ['create', 'b', true],
        ['get', 'nope', true],
        ['patch', 'b', true],
      ]);
      expect(isNotFound(calls[2]!.error)).toBe(true);
      expect((calls[3]!.result as KubeObject & { data?: unknown }).data).toEqual({ x: '1' });
      expect(fake.writes().map((c) => c.verb)).toEqual(['create', 'patch']);
      expect(fake.requests({ verb: 'patch' })).toHaveLength(1);
      fake.clearCalls();
      expect(fake.calls()).toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it('interceptors: per verb and per kind, can fail a call or pass it on changed', async () => {
    const seen: string[] = [];
    const fake = await newFakeClient({
      objects: [cmObj('default', 'a')],
      interceptors: [
        {
          kinds: [ConfigMap],
          async update(client, kind, obj, options) {
            seen.push(`update ${obj.metadata?.name}`);
            if (obj.metadata?.name === 'a')
              throw new StatusError({
                kind: 'Status',
                apiVersion: 'v1',
                status: 'Failure',
                code: 409,
                reason: 'Conflict',
                message: 'injected',
              });
            return client.update(kind, obj, options);
          },
        },
        {
          async create(client, kind, obj, options) {
            return client.create(
              kind,
              { ...obj, metadata: { ...obj.metadata, labels: { stamped: 'yes' } } },
              options,
            );
          },
        },
      ],
    });
    try {
      const a = await fake.get(ConfigMap, { namespace: 'default', name: 'a' });
      const err = await fake.update(ConfigMap, a).catch((e: unknown) => e);
      expect(isConflict(err)).toBe(true);
      const b = await fake.create(ConfigMap, { metadata: { namespace: 'default', name: 'b' } });
      expect(b.metadata?.labels).toEqual({ stamped: 'yes' });
      await fake.update(ConfigMap, b);
      // a Pod is not a ConfigMap: the first interceptor lets it through untouched
      const pod = await fake.create(Pod, {
        metadata: { namespace: 'default', name: 'p' },
        spec: { containers: [{ name: 'c', image: 'i' }] },
      });
      await fake.update(Pod, pod);
      expect(seen).toEqual(['update a', 'update b']);
      // the log shows the calls as the caller made them, failures included
      expect(
        fake.writes().map((c) => `${c.verb} ${c.kind.kind} ${c.name} ${c.error ? 'failed' : 'ok'}`),
      ).toEqual([
        'update ConfigMap a failed',
        'create ConfigMap b ok',
        'update ConfigMap b ok',
        'create Pod p ok',
        'update Pod p ok',
      ]);
      // unintercepted goes around them
      await fake.unintercepted.update(
        ConfigMap,
        await fake.get(ConfigMap, { namespace: 'default', name: 'a' }),
      );
    } finally {
      await fake.close();
    }
  });

  it('a subresource interceptor sees status writes', async () => {
    const subs: string[] = [];
    const fake = await newFakeClient({
      objects: [
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { namespace: 'default', name: 'p' },
          spec: { containers: [{ name: 'c', image: 'i' }] },
        } as KubeObject,
      ],
      interceptors: {
        subResourceUpdate(client, sub, kind, obj, options) {
          subs.push(`${sub} ${kind.kind}`);
          return (sub === 'status' ? client.status() : client.subResource(sub)).update(kind, obj, options);
        },
      },
    });
    try {
      const p = await fake.get(Pod, { namespace: 'default', name: 'p' });
      await fake.status().update(Pod, { ...p, status: { phase: 'Running' } });
      expect(subs).toEqual(['status Pod']);
      expect(fake.writes()[0]).toMatchObject({ verb: 'update', subResource: 'status', name: 'p' });
    } finally {
      await fake.close();
    }
  });

  it("injects errors with envtest's fault rules", async () => {
    const fake = await newFakeClient();
    try {
      const rule = fake.faults.failRequests({
        match: { verb: 'list', resource: 'configmaps' },
        status: 500,
        times: 1,
      });
      const err = await fake.list(ConfigMap, { namespace: 'default' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StatusError);
      expect((err as StatusError).httpStatus).toBe(500);
      expect(rule.hits).toBe(1);
      expect((await fake.list(ConfigMap, { namespace: 'default' })).items).toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it('a watch streams events and ends at the server when the caller stops', async () => {
    const fake = await newFakeClient();
    try {
      const ac = new AbortController();
      const got: string[] = [];
      const watching = (async () => {
        for await (const e of fake.watch(ConfigMap, { namespace: 'default', signal: ac.signal })) {
          got.push(`${e.type} ${(e.object as KubeObject).metadata?.name}`);
          if (got.length === 2) break;
        }
      })();
      await fake.create(ConfigMap, { metadata: { namespace: 'default', name: 'a' } });
      await fake.delete(ConfigMap, { namespace: 'default', name: 'a' });
      await watching;
      expect(got).toEqual(['ADDED a', 'DELETED a']);
      await expect.poll(() => fake.server.activeWatches()).toBe(0);
    } finally {
      await fake.close();
    }
  });

  it('several fakes can share one server; close() leaves a shared server running', async () => {
    const server = createInProcessApiServer();
    try {
      const one = await newFakeClient({ server, fieldOwner: 'one' });
      const two = await newFakeClient({ server, objects: [cmObj('default', 'shared')] });
      expect((await one.get(ConfigMap, { namespace: 'default', name: 'shared' })).metadata?.name).toBe(
        'shared',
      );
      await one.close();
      expect((await two.list(ConfigMap, { namespace: 'default' })).items).toHaveLength(1);
      await two.close();
    } finally {
      await server.stop();
    }
  });
  it('every verb goes through its interceptor function, subresources included', async () => {
    const seen: string[] = [];
    const via = <R>(verb: string, call: () => R): R => {
      seen.push(verb);
      return call();
    };
    const fake = await newFakeClient({
      objects: [cmObj('default', 'a', { k: 'v' })],
      interceptors: {
        kinds: [ConfigMap, Pod],
        get: (c, k, key, o) => via('get', () => c.get(k, key, o)),
        list: (c, k, o) => via('list', () => c.list(k, o)),
        create: (c, k, obj, o) => via('create', () => c.create(k, obj, o)),
        update: (c, k, obj, o) => via('update', () => c.update(k, obj, o)),
        patch: (c, k, key, p, o) => via('patch', () => c.patch(k, key, p, o)),
        apply: (c, k, cfg, o) => via('apply', () => c.apply(k, cfg, o)),
        delete: (c, k, key, o) => via('delete', () => c.delete(k, key, o)),
        deleteAllOf: (c, k, o) => via('deleteAllOf', () => c.deleteAllOf(k, o)),
        watch: (c, k, o) => via('watch', () => c.watch(k, o)),
        subResourceGet: (c, sub, k, key, o) => via(`get ${sub}`, () => c.subResource(sub).get(k, key, o)),
        subResourceCreate: (c, sub, k, obj, body, o) =>
          via(`create ${sub}`, () => c.subResource(sub).create(k, obj, body, o)),
        subResourcePatch: (c, sub, k, key, p, o) => via(`patch ${sub}`, () => c.status().patch(k, key, p, o)),
        subResourceApply: (c, sub, k, cfg, o) => via(`apply ${sub}`, () => c.status().apply(k, cfg, o)),
      },
    });
    try {
      const key = { namespace: 'default', name: 'a' };
      const a = await fake.get(ConfigMap, key);
      await fake.list(ConfigMap, { namespace: 'default' });
      await fake.update(ConfigMap, a);
      await fake.patch(ConfigMap, key, { type: 'merge', data: { data: { p: '1' } } });
      await fake.apply(ConfigMap, { metadata: key, data: { s: '1' } }, { fieldManager: 'm' });
      const ac = new AbortController();
      for await (const _ of fake.watch(ConfigMap, { namespace: 'default', signal: ac.signal })) break;
      const pod = await fake.create(Pod, {
        metadata: { namespace: 'default', name: 'p' },
        spec: { containers: [{ name: 'c', image: 'i' }] },
      });
      await fake
        .status()
        .patch(
          Pod,
          { namespace: 'default', name: 'p' },
          { type: 'merge', data: { status: { phase: 'Running' } } },
        );
      await fake
        .status()
        .apply(
          Pod,
          { metadata: { namespace: 'default', name: 'p' }, status: { phase: 'Succeeded' } },
          { fieldManager: 'm', force: true },
        );
      await fake.subResource('eviction').create(Pod, pod, {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { namespace: 'default', name: 'p' },
      });
      await fake
        .subResource('status')
        .get(ConfigMap, key)
        .catch(() => undefined);
      await fake.delete(ConfigMap, key);
      await fake.deleteAllOf(ConfigMap, { namespace: 'default' });
      expect(seen).toEqual([
        'get',
        'list',
        'update',
        'patch',
        'apply',
        'watch',
        'create',
        'patch status',
        'apply status',
        'create eviction',
        'get status',
        'delete',
        'deleteAllOf',
      ]);
      expect(fake.calls().map((c) => (c.subResource ? `${c.verb} ${c.subResource}` : c.verb))).toEqual(seen);
    } finally {
      await fake.close();
    }
  });
});
