import { discardLogger, type KubeObject } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import { MultiNamespaceInformer } from '../src/internal/multi-namespace-informer.js';
import { StoreError } from '../src/store.js';

describe('MultiNamespaceInformer addIndexers', () => {
  it('refuses a duplicate index name before run with StoreError, as the single-namespace informer does', () => {
    const inf = new MultiNamespaceInformer<KubeObject>(
      ['a', 'b'],
      () => {
        throw new Error('not started in this test');
      },
      async () => true,
      discardLogger,
    );
    inf.addIndexers({ byX: () => [] });
    expect(() => inf.addIndexers({ byX: () => [] })).toThrow(StoreError);
    expect(() => inf.addIndexers({ byY: () => [] })).not.toThrow();
  });
});
