// The generated CRD installed into envtest (or, with USE_EXISTING_CLUSTER=true, a real cluster): the server accepts
// it, serves the kind through the typed client, applies the schema's defaults as applyDefaults does, and refuses
// what validate() refuses.
import { randomBytes } from 'node:crypto';
import {
  type ApiClient,
  isInvalid,
  Namespace,
  newClient,
  type ObjectOf,
  type StatusError,
} from '@kubeloop/client';
import { Environment } from '@kubeloop/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyDefaults, customResourceDefinition, validate } from '../src/index.js';
import { WebApp, WebAppV1alpha1 } from './fixtures/webapp.js';

describe('a generated CRD on a server', () => {
  let env: Environment;
  let client: ApiClient;
  let ns: string;
  beforeAll(async () => {
    env = new Environment({ crds: [customResourceDefinition(WebAppV1alpha1, WebApp)] });
    await env.start();
    client = newClient(env.config);
    ns = `crd-${process.pid}-${randomBytes(3).toString('hex')}`;
    await client.create(Namespace, { metadata: { name: ns } });
  });
  afterAll(async () => {
    await client?.delete(Namespace, { name: ns }).catch(() => undefined);
    await client?.close();
    await env?.stop();
  });

  it('serves the kind, applies the defaults the schema declares, and the status subresource', async () => {
    const obj: ObjectOf<typeof WebApp> = {
      metadata: { name: 'web', namespace: ns },
      spec: { image: 'nginx', replicas: 3, port: 80, tier: 'frontend', env: [{ name: 'A', value: '1' }] },
    };
    expect(validate(WebApp, obj)).toEqual([]);
    const created = await client.create(WebApp, { metadata: obj.metadata, spec: { image: 'nginx' } });
    expect(created.spec).toEqual(applyDefaults(WebApp, { spec: { image: 'nginx' } }).spec);
    const got = await client.get(WebApp, { namespace: ns, name: 'web' });
    expect(got.spec.replicas).toBe(1);
    got.status = { phase: 'Ready', replicas: 1 };
    const updated = await client.status().update(WebApp, got);
    expect(updated.status?.phase).toBe('Ready');
  });

  it('refuses an object that validate() refuses, on the same fields', async () => {
    const bad = {
      metadata: { name: 'bad', namespace: ns },
      spec: { replicas: 'many', tier: 'middle' },
    } as unknown as ObjectOf<typeof WebApp>;
    const local = validate(WebApp, bad)
      .map((e) => e.field)
      .sort();
    expect(local).toEqual(['spec.image', 'spec.replicas', 'spec.tier']);
    const err = (await client.create(WebApp, bad).catch((e: unknown) => e)) as StatusError;
    expect(isInvalid(err)).toBe(true);
    const fields = (err.status?.details?.causes ?? []).map((c) => c.field).sort();
    for (const f of local) expect(fields).toContain(f);
  });
});
