/**
 * The bad value of a field error, as apimachinery's `field.Error` prints it (one printer with `@kubeloop/crd`'s
 * validate()): a nil value is the quoted string "null", as in the null-item golden reply
 * (`spec.tags[0]: Invalid value: "null": …`); numbers, strings and objects as Go's %v, %q and %#v.
 */
import { describe, expect, it } from 'vitest';
import { fieldInvalid, fieldNotSupported } from '../../src/errors.js';

describe('field errors', () => {
  it('print the bad value as field.Error does', () => {
    expect(fieldInvalid('spec.x', null, 'why').detail).toBe('Invalid value: "null": why');
    expect(fieldInvalid('spec.x', 0.00001, 'why').detail).toBe('Invalid value: 1e-05: why');
    expect(fieldInvalid('spec.x', 'a\u0001b', 'why').detail).toBe('Invalid value: "a\\x01b": why');
    expect(fieldNotSupported('spec.o', { a: 2 }, ['x']).detail).toBe(
      'Unsupported value: map[string]interface {}{"a":2}: supported values: "x"',
    );
  });
});
