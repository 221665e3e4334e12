import { describe, expect, it } from 'vitest';
import { BrandedError, brand, discardLogger, hasBrand } from '../src/index.js';

class ParentError extends BrandedError {
  static override readonly brandName: string = 'test.ParentError';
}
class ChildError extends ParentError {
  static override readonly brandName: string = 'test.ChildError';
}
/** names no mark: tested by its prototype chain */
class PlainChildError extends ParentError {}

/** What a second installed copy of the package would define: another class with the same marks. */
function otherCopy() {
  class ParentError2 extends BrandedError {
    static override readonly brandName: string = 'test.ParentError';
  }
  class ChildError2 extends ParentError2 {
    static override readonly brandName: string = 'test.ChildError';
  }
  return { ParentError2, ChildError2 };
}

describe('BrandedError', () => {
  it('answers instanceof for errors made by another copy of the class, by mark', () => {
    const { ParentError2, ChildError2 } = otherCopy();
    const e = new ChildError2('x', { cause: 'c' });
    expect(e).toBeInstanceOf(Error);
    expect(e instanceof ChildError).toBe(true);
    expect(e instanceof ParentError).toBe(true);
    expect(new ParentError2('p') instanceof ChildError).toBe(false);
    expect(e.message).toBe('x');
    expect(e.cause).toBe('c');
  });

  it('a subclass that names no mark is tested by prototype, and never matches a plain object', () => {
    const plain = new PlainChildError('p');
    expect(plain instanceof PlainChildError).toBe(true);
    expect(plain instanceof ParentError).toBe(true);
    expect(new ParentError('q') instanceof PlainChildError).toBe(false);
    expect({} instanceof ParentError).toBe(false);
    expect((null as unknown) instanceof ParentError).toBe(false);
  });

  it('brand and hasBrand mark any object under a global symbol', () => {
    const o = {};
    expect(hasBrand(o, 'test.Thing')).toBe(false);
    brand(o, 'test.Thing');
    expect(hasBrand(o, 'test.Thing')).toBe(true);
    expect((o as Record<symbol, unknown>)[Symbol.for('kubeloop.test.Thing')]).toBe(true);
    expect(hasBrand(o, 'test.Other')).toBe(false);
    expect(hasBrand('str', 'test.Thing')).toBe(false);
    expect(hasBrand(undefined, 'test.Thing')).toBe(false);
  });
});

describe('discardLogger', () => {
  it('drops every record, and its children are discard loggers too', () => {
    for (const level of ['debug', 'info', 'warn', 'error'] as const)
      expect(discardLogger[level]({ a: 1 }, 'msg')).toBeUndefined();
    expect(discardLogger.child({ name: 'x' })).toBe(discardLogger);
    expect(Object.isFrozen(discardLogger)).toBe(true);
  });
});
