import { describe, expect, it } from 'vitest';
import { createOrPatch, createOrUpdate } from '../src/controllerutil/index.js';
import {
  type HttpRequest,
  type HttpResponse,
  type HttpTransport,
  type RESTMapping,
  type ResourceScope,
  StaticRESTMapper,
} from '../src/entries/apiutil.js';
import { InvalidRequestError } from '../src/entries/errors.js';
import { ApiClient, ConfigMap, metadataOnly, Namespace } from '../src/index.js';
import { collectionPath } from '../src/paths.js';

/**
 * Breaker report (item 1): a name or namespace of `.` / `..` was sent as a dot segment, and the URL resolved it
 * to another resource — `delete(ConfigMap, {namespace: 'team-a', name: '..'})` deleted the namespace. client-go
 * refuses such segments before sending (`IsValidPathSegmentName`: not `.` or `..`, no `/` or `%`).
 */

/** Records every request and answers each with `reply`. */
function recording(reply: unknown): HttpTransport & { requests: HttpRequest[] } {
  const requests: HttpRequest[] = [];
  return {
    requests,
    async request(req: HttpRequest): Promise<HttpResponse> {
      requests.push(req);
      const text = JSON.stringify(reply);
      return {
        status: 200,
        headers: {},
        body: {
          text: async () => text,
          async *[Symbol.asyncIterator]() {
            yield text;
          },
        },
      };
    },
    close: async () => {},
  };
}

const mapper = new StaticRESTMapper([
  {
    gvk: { group: '', version: 'v1', kind: 'Namespace' },
    resource: { group: '', version: 'v1', resource: 'namespaces' },
    scope: 'Cluster',
  },
  {
    gvk: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    scope: 'Namespaced',
  },
]);

const BAD = ['.', '..', 'a/b', '../x', 'a%2Fb', '%'];

function setup() {
  const t = recording({ metadata: { name: 'x', namespace: 'team-a', resourceVersion: '1' }, items: [] });
  return { t, c: new ApiClient({ transport: t, restMapper: mapper }) };
}

const cm = (namespace: string, name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace, name, resourceVersion: '1' },
});

/** Every client call that builds a path from a name (`n`) and a namespace (`ns`). */
function calls(c: ApiClient, ns: string, n: string): Array<[string, () => Promise<unknown>]> {
  return [
    ['get', () => c.get(ConfigMap, { namespace: ns, name: n })],
    ['get metadata-only', () => c.get(metadataOnly(ConfigMap), { namespace: ns, name: n })],
    ['update', () => c.update(ConfigMap, cm(ns, n))],
    ['patch', () => c.patch(ConfigMap, { namespace: ns, name: n }, { type: 'merge', data: {} })],
    ['delete', () => c.delete(ConfigMap, { namespace: ns, name: n })],
    ['delete by object', () => c.delete(ConfigMap, cm(ns, n))],
    ['apply', () => c.apply(ConfigMap, cm(ns, n), { fieldManager: 'm' })],
    ['status().update', () => c.status().update(ConfigMap, cm(ns, n))],
    ['subResource(scale).get', () => c.subResource('scale').get(ConfigMap, { namespace: ns, name: n })],
    ['createOrUpdate', () => createOrUpdate(c, ConfigMap, { namespace: ns, name: n }, () => {})],
    ['createOrPatch', () => createOrPatch(c, ConfigMap, { namespace: ns, name: n }, () => {})],
  ];
}

describe('path segments (client-go IsValidPathSegmentName)', () => {
  it('refuses a name of ., .. or with / or % on every verb, before any request', async () => {
    for (const bad of BAD) {
      const { t, c } = setup();
      for (const [verb, call] of calls(c, 'team-a', bad)) {
        await expect(call(), `${verb} name ${bad}`).rejects.toThrow(InvalidRequestError);
        await expect(call(), `${verb} name ${bad}`).rejects.toThrow(/invalid resource name/);
      }
      expect(t.requests).toEqual([]);
    }
  });

  it('refuses such a namespace on every verb, list, watch, create and deleteAllOf included', async () => {
    for (const bad of BAD) {
      const { t, c } = setup();
      const all: Array<[string, () => Promise<unknown>]> = [
        ...calls(c, bad, 'x'),
        ['list', () => c.list(ConfigMap, { namespace: bad })],
        ['list metadata-only', () => c.list(metadataOnly(ConfigMap), { namespace: bad })],
        ['create', () => c.create(ConfigMap, cm(bad, 'x'))],
        ['deleteAllOf', () => c.deleteAllOf(ConfigMap, { namespace: bad })],
        [
          'watch',
          async () => {
            for await (const _ of c.watch(ConfigMap, { namespace: bad })) break;
          },
        ],
      ];
      for (const [verb, call] of all) {
        await expect(call(), `${verb} namespace ${bad}`).rejects.toThrow(/invalid namespace/);
      }
      expect(t.requests).toEqual([]);
    }
  });

  it('names the segment and the rule in the message, like client-go', async () => {
    const { c } = setup();
    await expect(c.delete(ConfigMap, { namespace: 'team-a', name: '..' })).rejects.toThrow(
      `invalid resource name "..": [may not be '..']`,
    );
    await expect(c.list(ConfigMap, { namespace: 'a/b%' })).rejects.toThrow(
      `invalid namespace "a/b%": [may not contain '/', may not contain '%']`,
    );
  });

  it('refuses an invalid subresource name when the subresource client is made', () => {
    const { c } = setup();
    for (const bad of ['', ...BAD]) expect(() => c.subResource(bad)).toThrow(InvalidRequestError);
  });

  it('a namespace given for a cluster-scoped kind is ignored, not checked (controller-runtime NamespaceIfScoped)', async () => {
    const { t, c } = setup();
    await c.get(Namespace, { namespace: '..', name: 'kube-system' });
    expect(t.requests.map((r) => r.path)).toEqual(['/api/v1/namespaces/kube-system']);
  });

  it('names with dots that are not dot segments still work, percent-encoded', async () => {
    const { t, c } = setup();
    await c.get(ConfigMap, { namespace: 'team-a', name: '...' });
    await c.get(ConfigMap, { namespace: 'team-a', name: 'a.b' });
    await c.get(ConfigMap, { namespace: 'team-a', name: 'a:b' });
    expect(t.requests.map((r) => r.path)).toEqual([
      '/api/v1/namespaces/team-a/configmaps/...',
      '/api/v1/namespaces/team-a/configmaps/a.b',
      '/api/v1/namespaces/team-a/configmaps/a%3Ab',
    ]);
  });
});

describe('collectionPath', () => {
  const mapping = (group: string, resource: string, kind: string, scope: ResourceScope): RESTMapping => ({
    gvk: { group, version: 'v1', kind },
    resource: { group, version: 'v1', resource },
    scope,
  });
  const pods = mapping('', 'pods', 'Pod', 'Namespaced');

  it('percent-encodes the namespace, uses /apis for named groups and ignores a namespace for cluster scope', () => {
    expect(collectionPath(pods, 'a b')).toBe('/api/v1/namespaces/a%20b/pods');
    expect(collectionPath(pods, undefined)).toBe('/api/v1/pods');
    expect(collectionPath(mapping('apps', 'deployments', 'Deployment', 'Namespaced'), 'ns')).toBe(
      '/apis/apps/v1/namespaces/ns/deployments',
    );
    expect(collectionPath(mapping('', 'nodes', 'Node', 'Cluster'), 'ignored')).toBe('/api/v1/nodes');
  });

  it('refuses a namespace that is not a path segment', () => {
    expect(() => collectionPath(pods, '..')).toThrow(InvalidRequestError);
  });
});
