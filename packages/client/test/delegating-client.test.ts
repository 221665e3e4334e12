import { describe, expect, it } from 'vitest';
import { DelegatingClient } from '../src/entries/apiutil.js';
import { type Client, ConfigMap, type Reader } from '../src/index.js';

describe('DelegatingClient (cached reads, live writes)', () => {
  it('sends get and list to the reader and every other call to the live client', async () => {
    const calls: string[] = [];
    const record =
      (who: string, name: string) =>
      (..._args: unknown[]) => {
        calls.push(`${who}.${name}`);
        return Promise.resolve(undefined);
      };
    const reader = { get: record('reader', 'get'), list: record('reader', 'list') } as unknown as Reader;
    const names = ['get', 'list', 'create', 'update', 'patch', 'delete', 'deleteAllOf', 'apply', 'watch'];
    const live = Object.fromEntries(names.map((n) => [n, record('live', n)])) as unknown as Client & {
      restMapper: unknown;
    };
    Object.assign(live, {
      restMapper: { tag: 'mapper' },
      status: () => ({ tag: 'status' }),
      subResource: (n: string) => ({ tag: n }),
    });
    const c = new DelegatingClient(reader, live);
    const key = { namespace: 'ns', name: 'a' };
    const obj = { metadata: key };
    await c.get(ConfigMap, key);
    await c.list(ConfigMap, { namespace: 'ns' });
    await c.create(ConfigMap, obj);
    await c.update(ConfigMap, obj);
    await c.patch(ConfigMap, key, { type: 'merge', data: {} });
    await c.delete(ConfigMap, key);
    await c.deleteAllOf(ConfigMap, { namespace: 'ns' });
    await c.apply(ConfigMap, obj, { fieldManager: 'm' });
    await c.watch(ConfigMap);
    expect(calls).toEqual([
      'reader.get',
      'reader.list',
      'live.create',
      'live.update',
      'live.patch',
      'live.delete',
      'live.deleteAllOf',
      'live.apply',
      'live.watch',
    ]);
    expect(c.restMapper).toEqual({ tag: 'mapper' });
    expect(c.status()).toEqual({ tag: 'status' });
    expect(c.subResource('scale')).toEqual({ tag: 'scale' });
  });
});
