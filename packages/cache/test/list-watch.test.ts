import { ConfigMap, type Kind, type ListOptions, type WatchOptions } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { listWatchFor } from '../src/index.js';

function recordingClient() {
  const calls: Array<{ verb: string; kind: string; opts: Record<string, unknown> }> = [];
  return {
    calls,
    client: {
      list: async (kind: Kind, opts: ListOptions) => {
        calls.push({ verb: 'list', kind: kind.kind, opts: { ...opts } });
        return { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '1' }, items: [] };
      },
      watch: (kind: Kind, opts: WatchOptions) => {
        calls.push({ verb: 'watch', kind: kind.kind, opts: { ...opts } });
        return (async function* () {})();
      },
    } as never,
  };
}

describe('listWatchFor (client-go NewFilteredListWatchFromClient)', () => {
  it('list and watch carry the same namespace and selectors, plus each call’s own resourceVersion, paging and WatchList options', async () => {
    const { calls, client } = recordingClient();
    const lw = listWatchFor(client, ConfigMap, {
      namespace: 'ns',
      labelSelector: 'app=web',
      fieldSelector: { 'metadata.name': 'x' },
    });
    const signal = new AbortController().signal;
    await lw.list({ signal, resourceVersion: '0', limit: 500 });
    await lw.list({ signal, continue: 'tok' });
    lw.watch({
      signal,
      resourceVersion: '7',
      allowWatchBookmarks: true,
      timeoutSeconds: 300,
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
    });
    const scope = { namespace: 'ns', labelSelector: 'app=web', fieldSelector: { 'metadata.name': 'x' } };
    expect(calls[0]).toEqual({
      verb: 'list',
      kind: 'ConfigMap',
      opts: { ...scope, signal, resourceVersion: '0', limit: 500 },
    });
    // A later page carries only the continue token (a resourceVersion with continue is refused).
    expect(calls[1]?.opts).toEqual({ ...scope, signal, continue: 'tok' });
    expect(calls[2]?.opts).toEqual({
      ...scope,
      signal,
      resourceVersion: '7',
      allowWatchBookmarks: true,
      timeoutSeconds: 300,
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
    });
  });

  it('an empty scope sends no namespace and no selectors (all namespaces)', async () => {
    const { calls, client } = recordingClient();
    const lw = listWatchFor(client, ConfigMap, { namespace: '' });
    const signal = new AbortController().signal;
    await lw.list({ signal });
    lw.watch({ signal, resourceVersion: '1', allowWatchBookmarks: true, timeoutSeconds: 300 });
    expect(calls[0]?.opts).toEqual({ signal });
    expect(Object.keys(calls[1]?.opts ?? {}).sort()).toEqual([
      'allowWatchBookmarks',
      'resourceVersion',
      'signal',
      'timeoutSeconds',
    ]);
  });
});
