import {
  ConfigMap,
  InvalidRequestError,
  isUnsupportedMediaType,
  type KubeObject,
  kind,
  newClient,
  UnsupportedPatchTypeError,
} from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { realCluster, useFaultServer } from './support/fault-server.js';
import { waitFor } from './support.js';

const CustomResourceDefinition = kind('apiextensions.k8s.io/v1', 'CustomResourceDefinition');
interface Widget extends KubeObject {
  spec?: { color?: string };
}
const Widget = kind<Widget>('example.com/v1', 'Widget');

describe.skipIf(realCluster)('C18 patch content types (envtest)', () => {
  const ctx = useFaultServer('kubeloop-c18');

  it('C18: each patch helper sends its exact Content-Type; strategic merge on a custom resource is a typed error suggesting merge; apply without a field manager is refused before sending', async () => {
    const ns = await ctx.namespace('c18');
    const key = { namespace: ns, name: 'cm' };
    await ctx.api.create(ConfigMap, { metadata: key, data: { a: '1' } });
    // envtest answers 415 to any PATCH whose Content-Type is not the patch type's.
    await ctx.api.patch(ConfigMap, key, { type: 'merge', data: { data: { b: '2' } } });
    await ctx.api.patch(ConfigMap, key, { type: 'json', data: [{ op: 'add', path: '/data/c', value: '3' }] });
    await ctx.api.patch(ConfigMap, key, { type: 'strategic', data: { data: { d: '4' } } });
    await ctx.api.patch(
      ConfigMap,
      key,
      { type: 'apply', data: { apiVersion: 'v1', kind: 'ConfigMap', metadata: key, data: { e: '5' } } },
      { fieldManager: 'c18' },
    );
    expect((await ctx.api.get(ConfigMap, key)).data).toMatchObject({
      a: '1',
      b: '2',
      c: '3',
      d: '4',
      e: '5',
    });

    await ctx.api.create(CustomResourceDefinition, {
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { color: { type: 'string' } } } },
              },
            },
          },
        ],
      },
    } as KubeObject);
    const wkey = { namespace: ns, name: 'w1' };
    await waitFor(async () => {
      try {
        await ctx.api.create(Widget, { metadata: wkey, spec: { color: 'red' } });
        return true;
      } catch {
        return false;
      }
    }, 'the Widget kind served');
    const err = await ctx.api
      .patch(Widget, wkey, { type: 'strategic', data: { spec: { color: 'blue' } } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsupportedPatchTypeError);
    expect(isUnsupportedMediaType(err)).toBe(true);
    expect((err as Error).message).toMatch(/merge patch/);
    expect((err as UnsupportedPatchTypeError).suggestedPatchType).toBe('merge');
    // The suggestion works.
    await ctx.api.patch(Widget, wkey, { type: 'merge', data: { spec: { color: 'blue' } } });
    expect((await ctx.api.get(Widget, wkey)).spec?.color).toBe('blue');

    const before = ctx.server.faults.requests({ method: 'PATCH', namespace: ns }).length;
    const noManager = newClient(ctx.config);
    ctx.cleanups.push(() => noManager.close());
    await expect(
      noManager.patch(ConfigMap, key, { type: 'apply', data: { metadata: key, data: { f: '6' } } }),
    ).rejects.toBeInstanceOf(InvalidRequestError);
    expect(ctx.server.faults.requests({ method: 'PATCH', namespace: ns })).toHaveLength(before);
  });
});
