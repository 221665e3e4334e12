import { ConfigMap, type KubeObject, kind } from '@kubeloop/client';
import {
  InvalidRequestError,
  isUnsupportedMediaType,
  UnsupportedPatchTypeError,
} from '@kubeloop/client/errors';
import { describe, expect, it } from 'vitest';
import { installCRD } from './support/crds.js';
import { recordingClient } from './support/recording-transport.js';
import { testConfig, useLiveCluster } from './support.js';

interface Widget extends KubeObject {
  spec?: { color?: string };
}
const Widget = kind<Widget>('c18.kubeloop.test/v1', 'Widget');

describe('C18 patch content types', () => {
  const live = useLiveCluster();

  it('C18: each patch helper sends its exact Content-Type; strategic merge on a custom resource is a typed error suggesting merge; apply without a field manager is refused before sending', async () => {
    const { api, ns } = await live.namespace('c18');
    const key = { namespace: ns, name: 'cm' };
    await api.create(ConfigMap, { metadata: key, data: { a: '1' } });
    // The server (envtest or kube-apiserver) answers 415 to any PATCH whose Content-Type is not the patch type's.
    await api.patch(ConfigMap, key, { type: 'merge', data: { data: { b: '2' } } });
    await api.patch(ConfigMap, key, { type: 'json', data: [{ op: 'add', path: '/data/c', value: '3' }] });
    await api.patch(ConfigMap, key, { type: 'strategic', data: { data: { d: '4' } } });
    await api.patch(
      ConfigMap,
      key,
      { type: 'apply', data: { apiVersion: 'v1', kind: 'ConfigMap', metadata: key, data: { e: '5' } } },
      { fieldManager: 'c18' },
    );
    expect((await api.get(ConfigMap, key)).data).toMatchObject({
      a: '1',
      b: '2',
      c: '3',
      d: '4',
      e: '5',
    });

    await installCRD(api, {
      group: 'c18.kubeloop.test',
      kind: 'Widget',
      plural: 'widgets',
      scope: 'Namespaced',
    });
    const wkey = { namespace: ns, name: 'w1' };
    await api.create(Widget, { metadata: wkey, spec: { color: 'red' } });
    const err = await api
      .patch(Widget, wkey, { type: 'strategic', data: { spec: { color: 'blue' } } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsupportedPatchTypeError);
    expect(isUnsupportedMediaType(err)).toBe(true);
    expect((err as Error).message).toMatch(/merge patch/);
    expect((err as UnsupportedPatchTypeError).suggestedPatchType).toBe('merge');
    // The suggestion works.
    await api.patch(Widget, wkey, { type: 'merge', data: { spec: { color: 'blue' } } });
    expect((await api.get(Widget, wkey)).spec?.color).toBe('blue');

    // A client without a field owner, recording every request it sends.
    const { client: noManager, requests } = recordingClient(testConfig());
    live.cleanups.push(() => noManager.close());
    await expect(
      noManager.patch(ConfigMap, key, { type: 'apply', data: { metadata: key, data: { f: '6' } } }),
    ).rejects.toBeInstanceOf(InvalidRequestError);
    expect(requests.filter((r) => r.method === 'PATCH')).toEqual([]);
  });
});
