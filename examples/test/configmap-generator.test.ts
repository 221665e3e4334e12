import { newManager } from '@kubeloop/builder';
import { ConfigMap, Deployment } from '@kubeloop/client';
import { describe, expect, it, vi } from 'vitest';
import { addConfigMapGenerator, configMapNameFor } from '../src/configmap-generator.js';
import { useEnvtest } from './support.js';

const t = useEnvtest();

const deployment = (ns: string, image: string) => ({
  metadata: { namespace: ns, name: 'web' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image }] } },
  },
});

describe('example: ConfigMap generator with owns', () => {
  it('creates the owned ConfigMap, follows the Deployment, and restores the ConfigMap when someone edits it', async () => {
    const ns = await t.namespace();
    const client = t.client();
    // Scoped to the test namespace: on a shared cluster (USE_EXISTING_CLUSTER=true) other tests own the rest.
    const mgr = newManager(t.env().config, { namespace: ns });
    addConfigMapGenerator(mgr);
    const stop = new AbortController();
    const running = mgr.start(stop.signal);
    try {
      const dep = await client.create(Deployment, deployment(ns, 'app:1'));
      const key = { namespace: ns, name: configMapNameFor('web') };
      await vi.waitFor(async () =>
        expect((await client.get(ConfigMap, key)).data).toEqual({ images: 'app=app:1' }),
      );
      const cm = await client.get(ConfigMap, key);
      expect(cm.metadata?.ownerReferences).toEqual([
        expect.objectContaining({
          kind: 'Deployment',
          name: 'web',
          uid: dep.metadata?.uid,
          controller: true,
        }),
      ]);

      const current = await client.get(Deployment, { namespace: ns, name: 'web' });
      await client.update(Deployment, { ...current, spec: deployment(ns, 'app:2').spec });
      await vi.waitFor(async () =>
        expect((await client.get(ConfigMap, key)).data).toEqual({ images: 'app=app:2' }),
      );

      // owns(ConfigMap): an edit of the child reconciles its owner, which puts it back
      await client.update(ConfigMap, { ...(await client.get(ConfigMap, key)), data: { images: 'tampered' } });
      await vi.waitFor(async () =>
        expect((await client.get(ConfigMap, key)).data).toEqual({ images: 'app=app:2' }),
      );
    } finally {
      stop.abort();
      await running;
    }
  });
});
