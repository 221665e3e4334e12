import { metadataOnly, type PartialObjectMetadata, Secret, type WatchEvent } from '@kubeloop/client';
import { InvalidRequestError } from '@kubeloop/client/errors';
import { afterEach, describe, expect, it } from 'vitest';
import { recordingClient } from './support/recording-transport.js';
import { testConfig, uniqueName, waitFor, withNamespace } from './support.js';

describe('client metadata-only objects (PartialObjectMetadata)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  it('get, list and watch return metadata only, typed v1/Secret, with the PartialObjectMetadata Accept header', async () => {
    const { client: api, requests } = recordingClient(testConfig());
    cleanups.push(() => api.close());
    const ns = uniqueName('meta');
    cleanups.push(await withNamespace(api, ns));
    const SecretMeta = metadataOnly(Secret);
    await api.create(Secret, {
      metadata: { namespace: ns, name: 's1', labels: { app: 'x' } },
      stringData: { password: 'hunter2' },
    });

    const got = await api.get(SecretMeta, { namespace: ns, name: 's1' });
    expect(got).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: expect.objectContaining({ name: 's1' }),
    });
    expect(JSON.stringify(got)).not.toContain('aHVudGVyMg'); // base64 of the data never arrives in the object
    const getReq = requests.find((r) => r.method === 'GET' && r.path.endsWith('/secrets/s1'));
    expect(getReq?.accept).toMatch(/^application\/json;as=PartialObjectMetadata;g=meta\.k8s\.io;v=v1/);

    const list = await api.list(SecretMeta, { namespace: ns, labelSelector: { app: 'x' } });
    expect(list.items).toHaveLength(1);
    expect(Object.keys(list.items[0]!).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
    expect(list.items[0]!.kind).toBe('Secret');
    expect(requests.find((r) => r.path.includes('/secrets?'))?.accept).toMatch(
      /as=PartialObjectMetadataList/,
    );

    const ac = new AbortController();
    const events: WatchEvent<PartialObjectMetadata>[] = [];
    const watching = (async () => {
      for await (const ev of api.watch(SecretMeta, {
        namespace: ns,
        resourceVersion: list.metadata.resourceVersion,
        signal: ac.signal,
      }))
        events.push(ev);
    })();
    await api.patch(
      Secret,
      { namespace: ns, name: 's1' },
      { type: 'merge', data: { metadata: { labels: { v: '2' } } } },
    );
    await waitFor(() => events.length > 0, 'the MODIFIED event');
    ac.abort();
    await watching;
    const ev = events[0]!;
    expect(ev.type).toBe('MODIFIED');
    expect(ev.type !== 'ERROR' && ev.object).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: expect.objectContaining({ labels: { app: 'x', v: '2' } }),
    });
  });

  it('patch and deleteAllOf work on metadata-only kinds; create and update are refused before sending', async () => {
    const { client: api, requests } = recordingClient(testConfig());
    cleanups.push(() => api.close());
    const ns = uniqueName('meta');
    cleanups.push(await withNamespace(api, ns));
    const SecretMeta = metadataOnly(Secret);
    await api.create(Secret, { metadata: { namespace: ns, name: 's1' }, stringData: { k: 'v' } });
    const patched = await api.patch(
      SecretMeta,
      { namespace: ns, name: 's1' },
      { type: 'merge', data: { metadata: { annotations: { a: 'b' } } } },
    );
    expect(patched).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: expect.objectContaining({ annotations: { a: 'b' } }),
    });
    expect((await api.get(Secret, { namespace: ns, name: 's1' })).data?.k).toBe('dg=='); // data untouched
    const before = requests.length;
    await expect(api.create(SecretMeta, { metadata: { namespace: ns, name: 's2' } })).rejects.toBeInstanceOf(
      InvalidRequestError,
    );
    await expect(api.update(SecretMeta, patched)).rejects.toThrow(/did you mean to patch/);
    expect(requests.length).toBe(before);
    await api.deleteAllOf(SecretMeta, { namespace: ns });
    expect((await api.list(SecretMeta, { namespace: ns })).items).toHaveLength(0);
  });
});
