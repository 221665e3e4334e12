import { ConfigMap, type DeepReadonly, type KubeObject } from '@kubeloop/client';
import { SelectorParseError } from '@kubeloop/client/errors';
import { FakeClock } from '@kubeloop/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { InformerCache } from '../src/index.js';
import { FakeClient } from './support/fake-client.js';

const running: AbortController[] = [];
afterEach(() => {
  for (const ac of running.splice(0)) ac.abort();
});

async function cacheWith(objs: Array<[string, Record<string, string> | undefined]>) {
  const fc = new FakeClient();
  const s = fc.server('ConfigMap');
  for (const [name, labels] of objs) s.create(name, {}, 'ns', labels);
  const cache = new InformerCache({ client: fc.asClient(), clock: new FakeClock() });
  const ac = new AbortController();
  running.push(ac);
  void cache.start(ac.signal);
  return cache;
}

const names = (items: readonly DeepReadonly<KubeObject>[]) => items.map((o) => o.metadata?.name).sort();

describe('cached list: LabelSelector objects (matchExpressions) as the API server reads them', () => {
  it('In, NotIn, Exists and DoesNotExist select like the server, combined with matchLabels', async () => {
    const cache = await cacheWith([
      ['web', { app: 'web', tier: 'front' }],
      ['db', { app: 'db', tier: 'back' }],
      ['bare', undefined],
    ]);
    const sel = async (labelSelector: object) =>
      names((await cache.list(ConfigMap, { labelSelector: labelSelector as never })).items);
    expect(await sel({ matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'x'] }] })).toEqual([
      'web',
    ]);
    expect(await sel({ matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }] })).toEqual([
      'bare',
      'db',
    ]);
    expect(await sel({ matchExpressions: [{ key: 'tier', operator: 'Exists' }] })).toEqual(['db', 'web']);
    expect(await sel({ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] })).toEqual(['bare']);
    expect(
      await sel({ matchLabels: { tier: 'back' }, matchExpressions: [{ key: 'app', operator: 'Exists' }] }),
    ).toEqual(['db']);
    expect(await sel({ matchLabels: {} })).toEqual(['bare', 'db', 'web']);
  });

  it('a map or object with an invalid key or value is refused as by the live client (SelectorParseError), null selects everything', async () => {
    const cache = new InformerCache({ client: new FakeClient().asClient() }); // not started: parsing comes first
    for (const bad of [
      { app: 'web,!admin' },
      { matchLabels: { app: 'web,tier=db' } },
      { matchExpressions: [{ key: 'app', operator: 'In', values: ['a,b'] }] },
      { matchExpressions: [{ key: 'app', operator: 'Exists', values: ['a'] }] },
      5,
    ])
      await expect(
        cache.list(ConfigMap, { labelSelector: bad as never }),
        JSON.stringify(bad),
      ).rejects.toBeInstanceOf(SelectorParseError);
    const started = await cacheWith([['one', { a: 'b' }]]);
    expect(names((await started.list(ConfigMap, { labelSelector: null as never })).items)).toEqual(['one']);
    expect(names((await started.list(ConfigMap, { fieldSelector: null as never })).items)).toEqual(['one']);
  });

  it('In/NotIn without values and an unknown operator are refused with SelectorParseError, before any wait', async () => {
    const cache = new InformerCache({ client: new FakeClient().asClient() }); // not started: parsing comes first
    for (const e of [
      { key: 'app', operator: 'In', values: [] },
      { key: 'app', operator: 'NotIn' },
      { key: 'app', operator: 'Equals', values: ['x'] },
    ])
      await expect(
        cache.list(ConfigMap, { labelSelector: { matchExpressions: [e] } as never }),
      ).rejects.toBeInstanceOf(SelectorParseError);
    // An empty string selects everything (no requirement), like the server.
    const started = await cacheWith([['one', { a: 'b' }]]);
    expect(names((await started.list(ConfigMap, { labelSelector: '  ' })).items)).toEqual(['one']);
  });
});
