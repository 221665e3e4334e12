import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withReadValues } from '../src/controllerutil/equality.js';
import {
  AlreadyOwnedError,
  addFinalizer,
  containsFinalizer,
  createMergePatch,
  FrozenObjectError,
  hasControllerReference,
  hasOwnerReference,
  isUnchanged,
  OwnerReferenceError,
  removeControllerReference,
  removeFinalizer,
  removeOwnerReference,
  setControllerReference,
  setOwnerReference,
} from '../src/controllerutil/index.js';
import type { KubeObject } from '../src/index.js';

const owner = (name: string, ns?: string, apiVersion = 'apps/v1', kind = 'Deployment'): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, uid: `uid-${name}`, ...(ns ? { namespace: ns } : {}) },
});
const child = (ns?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', ...(ns ? { namespace: ns } : {}) },
});

describe('owner references', () => {
  it('setControllerReference sets controller and blockOwnerDeletion, and is idempotent', () => {
    const o = owner('a', 'ns');
    const c = child('ns');
    setControllerReference(o, c);
    setControllerReference(o, c);
    expect(c.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'a',
        uid: 'uid-a',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(hasControllerReference(c)).toBe(true);
    expect(hasOwnerReference(o, c)).toBe(true);
  });

  it('refuses a second controller, naming the existing one, and changes nothing', () => {
    const c = child('ns');
    setControllerReference(owner('a', 'ns'), c);
    const before = structuredClone(c);
    const err = (() => {
      try {
        setControllerReference(owner('b', 'ns'), c);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(AlreadyOwnedError);
    expect((err as AlreadyOwnedError).code).toBe('ERR_ALREADY_OWNED');
    expect((err as Error).message).toMatch(/ns\/c is already owned by another Deployment controller a/);
    expect(c).toEqual(before);
  });

  it('matches owners by group and kind, not version: a moved owner is updated in place', () => {
    const c = child('ns');
    setControllerReference(owner('a', 'ns', 'example.com/v1beta1', 'Widget'), c);
    setControllerReference(owner('a', 'ns', 'example.com/v1', 'Widget'), c);
    expect(c.metadata?.ownerReferences).toHaveLength(1);
    expect(c.metadata?.ownerReferences?.[0]?.apiVersion).toBe('example.com/v1');
    expect(hasOwnerReference(owner('a', 'ns', 'example.com/v2', 'Widget'), c)).toBe(true);
    expect(hasOwnerReference(owner('a', 'ns', 'other.com/v1', 'Widget'), c)).toBe(false);
  });

  it('scope rules (C26): cluster-scoped owner of a namespaced object is fine; namespaced owner elsewhere is refused', () => {
    const c = child('ns');
    setControllerReference(owner('t1', undefined, 'example.com/v1', 'Tenant'), c);
    expect(() => setOwnerReference(owner('x', 'other'), child('ns'))).toThrow(OwnerReferenceError);
    expect(() => setOwnerReference(owner('x', 'other'), child('ns'))).toThrow(/cross-namespace/);
    expect(() => setControllerReference(owner('x', 'ns'), child())).toThrow(/cluster-scoped resource/);
  });

  it('an owner without uid or kind is refused, naming what is missing; ownerKind fills apiVersion/kind', () => {
    expect(() => setOwnerReference({ metadata: { name: 'a' } }, child('ns'))).toThrow(
      /apiVersion, kind, metadata.uid missing/,
    );
    const c = child('ns');
    setOwnerReference({ metadata: { name: 'a', uid: 'u', namespace: 'ns' } }, c, {
      ownerKind: { apiVersion: 'v1', kind: 'Secret' },
    });
    expect(c.metadata?.ownerReferences?.[0]).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      name: 'a',
      uid: 'u',
    });
  });

  it('setOwnerReference upserts a plain reference; remove errors when absent; removeControllerReference checks the owner', () => {
    const c = child('ns');
    setOwnerReference(owner('a', 'ns'), c);
    setOwnerReference(owner('b', 'ns'), c);
    expect(hasControllerReference(c)).toBe(false);
    removeOwnerReference(owner('a', 'ns'), c);
    expect(c.metadata?.ownerReferences?.map((r) => r.name)).toEqual(['b']);
    expect(() => removeOwnerReference(owner('a', 'ns'), c)).toThrow(/does not have an owner reference/);
    setControllerReference(owner('b', 'ns'), c);
    expect(() => removeControllerReference(owner('a', 'ns'), c)).toThrow(/controlled by Deployment b/);
    removeControllerReference(owner('b', 'ns'), c);
    expect(c.metadata?.ownerReferences).toEqual([]);
  });
});

describe('finalizers', () => {
  it('add, contains, remove report whether they changed the object', () => {
    const o: KubeObject = { metadata: { name: 'x' } };
    expect(addFinalizer(o, 'a/b')).toBe(true);
    expect(addFinalizer(o, 'a/b')).toBe(false);
    expect(containsFinalizer(o, 'a/b')).toBe(true);
    expect(removeFinalizer(o, 'a/b')).toBe(true);
    expect(removeFinalizer(o, 'a/b')).toBe(false);
    expect(o.metadata?.finalizers).toEqual([]);
  });
});

const deepFreeze = <T>(v: T): T => {
  if (v !== null && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
};

describe('frozen objects (read from a cache) get a typed error, not a bare TypeError', () => {
  const frozenChild = () =>
    deepFreeze({
      ...child('ns'),
      metadata: {
        name: 'c',
        namespace: 'ns',
        finalizers: ['keep'],
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'o', uid: 'uid-o', controller: true },
        ],
      },
    });
  it.each([
    ['addFinalizer', (o: KubeObject) => addFinalizer(o, 'new')],
    ['removeFinalizer', (o: KubeObject) => removeFinalizer(o, 'keep')],
    ['setControllerReference', (o: KubeObject) => setControllerReference(owner('o', 'ns'), o)],
    ['setOwnerReference', (o: KubeObject) => setOwnerReference(owner('p', 'ns'), o)],
    ['removeOwnerReference', (o: KubeObject) => removeOwnerReference(owner('o', 'ns'), o)],
    ['removeControllerReference', (o: KubeObject) => removeControllerReference(owner('o', 'ns'), o)],
  ])('%s throws FrozenObjectError naming the helper and the object', (helper, call) => {
    const obj = frozenChild();
    let caught: unknown;
    try {
      call(obj);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(FrozenObjectError);
    expect((caught as FrozenObjectError).code).toBe('ERR_FROZEN_OBJECT');
    expect((caught as Error).message).toContain(helper);
    expect((caught as Error).message).toContain('ConfigMap ns/c');
    expect((caught as Error).message).toContain('structuredClone');
  });
  it('a call that changes nothing does not throw on a frozen object, and a copy can be changed', () => {
    const obj = frozenChild();
    expect(addFinalizer(obj, 'keep')).toBe(false);
    expect(removeFinalizer(obj, 'absent')).toBe(false);
    const copy = structuredClone(obj);
    expect(addFinalizer(copy, 'new')).toBe(true);
    expect(copy.metadata?.finalizers).toEqual(['keep', 'new']);
  });
});

describe('isUnchanged / createMergePatch', () => {
  const read = {
    metadata: { name: 'd', labels: { a: '1', b: '2' }, resourceVersion: '5' },
    spec: {
      replicas: 1,
      template: { spec: { containers: [{ name: 'app', image: 'x:1', imagePullPolicy: 'IfNotPresent' }] } },
    },
  };

  it('key order, undefined, null vs absent and [] vs absent do not count as changes', () => {
    const m = structuredClone(read) as typeof read & { spec: { paused?: boolean } };
    m.metadata.labels = { b: '2', a: '1' };
    m.spec.paused = undefined;
    (m.spec.template.spec.containers[0] as { imagePullPolicy?: string }).imagePullPolicy = undefined;
    (m.metadata as Record<string, unknown>).finalizers = [];
    expect(isUnchanged(read, m)).toBe(true);
    expect(createMergePatch(read, m)).toEqual({});
  });

  it('real changes and deletions show, as an RFC 7386 patch', () => {
    // biome-ignore lint/suspicious/noExplicitAny: free-form edits of JSON test data
    const m = structuredClone(read) as Record<string, any>;
    m.spec.replicas = 3;
    delete m.metadata.labels.b;
    expect(isUnchanged(read, m)).toBe(false);
    expect(createMergePatch(read, m)).toEqual({ metadata: { labels: { b: null } }, spec: { replicas: 3 } });
    // biome-ignore lint/suspicious/noExplicitAny: free-form edits of JSON test data
    const m2 = structuredClone(read) as Record<string, any>;
    m2.spec.template.spec.containers[0].image = 'x:2';
    expect(createMergePatch(read, m2)).toEqual({
      spec: {
        template: { spec: { containers: [{ name: 'app', image: 'x:2', imagePullPolicy: 'IfNotPresent' }] } },
      },
    });
  });

  it('a Date set by mutate (client-node types timestamps as Date) is a value: it shows as a change and stays a Date in the patch and the PUT body, never {}', () => {
    const at = new Date(Date.UTC(2026, 11, 1, 5, 27, 55, 926));
    const base = {
      metadata: { name: 'p' },
      status: { startTime: '2026-01-01T00:00:00Z', conditions: [{ type: 'Ready', status: 'False' }] },
    };
    // biome-ignore lint/suspicious/noExplicitAny: free-form edits of JSON test data
    const m = structuredClone(base) as Record<string, any>;
    m.status.startTime = at;
    m.status.conditions = [{ type: 'Ready', status: 'True', lastTransitionTime: at }];
    expect(isUnchanged(base, m)).toBe(false);
    const patch = createMergePatch(base, m) as {
      status: { startTime: unknown; conditions: Array<Record<string, unknown>> };
    };
    expect(patch.status.startTime).toBe(at);
    expect(patch.status.conditions[0]?.lastTransitionTime).toBe(at);
    const body = withReadValues(base, m) as typeof m;
    expect(body.status.startTime).toBe(at);
    expect(body.status.conditions[0].lastTransitionTime).toBe(at);
    // a Date where the object had a map is a value too
    expect(withReadValues({ t: { a: 1 } }, { t: at })).toEqual({ t: at });
    // two Dates of the same instant are no change
    expect(isUnchanged({ t: at }, { t: new Date(at.getTime()) })).toBe(true);
  });

  it('property: a merge patch applied to the base gives the mutated object (without undefined)', () => {
    const json = fc.dictionary(
      fc.constantFrom('a', 'b', 'c'),
      fc.oneof(fc.integer(), fc.string(), fc.dictionary(fc.constantFrom('x', 'y'), fc.integer())),
    );
    fc.assert(
      fc.property(json, json, (base, mutated) => {
        const patched = applyMergePatch(structuredClone(base), createMergePatch(base, mutated));
        expect(isUnchanged(patched, mutated) && isUnchanged(mutated, patched)).toBe(true);
      }),
    );
  });
});

// biome-ignore lint/suspicious/noExplicitAny: RFC 7386 applies to JSON values of any shape
function applyMergePatch(target: any, patch: any): any {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out = typeof target === 'object' && target !== null && !Array.isArray(target) ? target : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}
