import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  gvkOf,
  isMetadataOnly,
  type Kind,
  metadataOnly,
  type PartialObjectMetadata,
  Pod,
  Secret,
} from '../src/index.js';

describe('metadataOnly(kind)', () => {
  it('names the same GVK, is marked and frozen, and is idempotent', () => {
    const m = metadataOnly(Secret);
    expect(gvkOf(m)).toEqual(gvkOf(Secret));
    expect(isMetadataOnly(m)).toBe(true);
    expect(isMetadataOnly(Secret)).toBe(false);
    expect(Object.isFrozen(m)).toBe(true);
    expect(metadataOnly(m)).toBe(m);
    expectTypeOf(metadataOnly(Pod)).toEqualTypeOf<Kind<PartialObjectMetadata>>();
  });
});
