/**
 * Every generated built-in kind descriptor against the run's API server's discovery (envtest, or a real
 * cluster with USE_EXISTING_CLUSTER=true): the group version serves the kind under the descriptor's resource
 * name, with its scope, verbs and subresources, read from the legacy discovery documents (`/api/v1`,
 * `/apis/<group>/<version>`) through the RESTMapper-independent transport and, for the resource and scope, the
 * client's RESTMapper.
 */
import { newClient } from '@kubeloop/client';
import { gvkOf } from '@kubeloop/client/apiutil';
import { type BuiltinKind, builtinKinds } from '@kubeloop/client/kinds';
import { Transport } from '@kubeloop/client/transport';
import { afterAll, describe, expect, it } from 'vitest';
import { testConfig } from './support.js';

interface Resource {
  name: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
}

const all: BuiltinKind[] = Object.values(builtinKinds).flatMap((g) => Object.values(g));

describe('built-in kind descriptors match the server discovery', () => {
  const transport = new Transport(testConfig());
  const client = newClient(testConfig());
  afterAll(async () => {
    await transport.close();
    await client.close();
  });
  const documents = new Map<string, Promise<Resource[]>>();
  const resourcesOf = (apiVersion: string): Promise<Resource[]> => {
    let doc = documents.get(apiVersion);
    if (!doc) {
      const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      doc = transport.request({ method: 'GET', path }).then(async (res) => {
        expect(res.status, path).toBe(200);
        return ((await res.body.json()) as { resources: Resource[] }).resources;
      });
      documents.set(apiVersion, doc);
    }
    return doc;
  };

  it('59 descriptors, unique group/version/kind', () => {
    expect(all).toHaveLength(59);
    expect(new Set(all.map((k) => `${k.apiVersion}/${k.kind}`)).size).toBe(59);
  });

  it.each(all.map((k) => [`${k.apiVersion} ${k.kind}`, k] as const))('%s', async (_, k) => {
    const resources = await resourcesOf(k.apiVersion);
    const main = resources.find((r) => r.name === k.resource);
    expect(main, `${k.apiVersion} serves ${k.resource}`).toBeDefined();
    expect(main?.kind).toBe(k.kind);
    expect(main?.namespaced).toBe(k.namespaced);
    expect([...(main?.verbs ?? [])].sort()).toEqual(k.verbs);
    const subs = resources
      .filter((r) => r.name.startsWith(`${k.resource}/`))
      .map((r) => r.name.slice(k.resource.length + 1))
      .sort();
    expect(subs).toEqual(k.subresources);
    if (k.verbs.includes('get')) {
      const mapping = await client.restMapper.restMapping(gvkOf(k));
      expect(mapping.resource.resource).toBe(k.resource);
      expect(mapping.scope).toBe(k.namespaced ? 'Namespaced' : 'Cluster');
    }
  });
});
