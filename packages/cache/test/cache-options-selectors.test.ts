import { ConfigMap, Secret } from '@kubeloop/client';
import { SelectorParseError } from '@kubeloop/client/errors';
import { describe, expect, it } from 'vitest';
import { CacheOptionsError, InformerCache } from '../src/index.js';
import { FakeClient } from './support/fake-client.js';

/**
 * Breaker report item 9: a label selector with bad syntax in the cache options (`defaultLabelSelector:
 * 'a in ('`, a byObject `labelSelector: '!!'`) was accepted; every list then got 400, the informer never synced
 * and `cache.list` never returned. The options are parsed when the cache is built (controller-runtime takes
 * parsed selectors, so bad syntax fails where it is written).
 */
function build(options: Record<string, unknown>): () => InformerCache {
  const client = new FakeClient().asClient();
  return () => new InformerCache({ client, ...options });
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('InformerCache options: selectors and sync periods are checked when the cache is built', () => {
  it('refuses a default label selector that does not parse, naming the option, the parse error as cause', () => {
    for (const bad of ['a in (', '!!', 'a=b=c', { 'bad key!': 'x' }]) {
      const err = thrown(build({ defaultLabelSelector: bad }));
      expect(err, JSON.stringify(bad)).toBeInstanceOf(CacheOptionsError);
      expect((err as Error).message).toMatch(/^defaultLabelSelector: /);
      expect((err as Error).cause).toBeInstanceOf(SelectorParseError);
    }
  });

  it('refuses a byObject label or field selector that does not parse, naming the kind', () => {
    expect(build({ byObject: [{ kind: ConfigMap, labelSelector: '!!' }] })).toThrow(
      /byObject v1\/ConfigMap: labelSelector: /,
    );
    expect(build({ byObject: [{ kind: Secret, fieldSelector: 'metadata.name' }] })).toThrow(
      /byObject v1\/Secret: fieldSelector: /,
    );
    expect(build({ byObject: [{ kind: Secret, fieldSelector: 'metadata.name=a=b' }] })).toThrow(
      CacheOptionsError,
    );
  });

  it('refuses a default field selector that does not parse', () => {
    for (const bad of ['metadata.name', 'metadata.name=a\\x', 'a=b=c']) {
      expect(build({ defaultFieldSelector: bad }), bad).toThrow(/^defaultFieldSelector: /);
    }
  });

  it('refuses a sync period that is not a finite number of ms >= 0, per kind too', () => {
    for (const bad of ['1000', Number.NaN, Number.POSITIVE_INFINITY, -1]) {
      expect(build({ syncPeriodMs: bad }), String(bad)).toThrow(/^syncPeriodMs/);
      expect(build({ byObject: [{ kind: Secret, syncPeriodMs: bad }] }), String(bad)).toThrow(
        /byObject v1\/Secret: syncPeriodMs/,
      );
    }
  });

  it('accepts valid selectors of every form', () => {
    expect(
      build({
        defaultLabelSelector: 'app in (a, b),!legacy',
        defaultFieldSelector: 'metadata.namespace!=kube-system,',
        byObject: [
          { kind: ConfigMap, labelSelector: { app: 'x' }, fieldSelector: { 'metadata.name': 'a,b' } },
          {
            kind: Secret,
            labelSelector: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] },
            syncPeriodMs: 0,
          },
        ],
      }),
    ).not.toThrow();
  });
});
