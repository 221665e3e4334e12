import { ConfigMap, Namespace } from '@kubeloop/client';
import { createOrUpdate } from '@kubeloop/client/controllerutil';
import { InvalidRequestError } from '@kubeloop/client/errors';
import { afterEach, describe, expect, it } from 'vitest';
import { recordingClient } from './support/recording-transport.js';
import { testConfig, uniqueName, withNamespace } from './support.js';

/**
 * Breaker report item 1 over the real stack: a name of `.` sent a deletecollection of every ConfigMap in the
 * namespace and `..` deleted the namespace itself, because a URL resolves dot segments. client-go refuses
 * such segments before sending (IsValidPathSegmentName); so does the client now, and nothing is deleted.
 */
describe('client: names and namespaces that are not path segments never reach the server', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  it('delete/get/list/deleteAllOf/createOrUpdate with . or .. are refused before sending; the namespace and its ConfigMaps stay', async () => {
    const { client: api, requests } = recordingClient(testConfig());
    cleanups.push(() => api.close());
    const ns = uniqueName('dots');
    cleanups.push(await withNamespace(api, ns));
    await api.create(ConfigMap, { metadata: { namespace: ns, name: 'keep' }, data: { a: '1' } });
    const before = requests.length;

    for (const name of ['.', '..', 'a/b', '%2e%2e']) {
      await expect(api.delete(ConfigMap, { namespace: ns, name })).rejects.toBeInstanceOf(
        InvalidRequestError,
      );
      await expect(api.get(ConfigMap, { namespace: ns, name })).rejects.toBeInstanceOf(InvalidRequestError);
      await expect(createOrUpdate(api, ConfigMap, { namespace: ns, name }, () => {})).rejects.toBeInstanceOf(
        InvalidRequestError,
      );
    }
    for (const namespace of ['.', '..']) {
      await expect(api.list(ConfigMap, { namespace })).rejects.toBeInstanceOf(InvalidRequestError);
      await expect(api.deleteAllOf(ConfigMap, { namespace })).rejects.toBeInstanceOf(InvalidRequestError);
    }
    expect(requests.slice(before)).toEqual([]);

    expect((await api.get(Namespace, { name: ns })).metadata?.name).toBe(ns);
    // kube-root-ca.crt: kube-controller-manager publishes it into every namespace of a full cluster.
    const names = (await api.list(ConfigMap, { namespace: ns })).items.map((c) => c.metadata?.name);
    expect(names.filter((n) => n !== 'kube-root-ca.crt')).toEqual(['keep']);
  });
});
