/**
 * Go's printing of decoded JSON values in kube-apiserver messages. The expected strings are what the real 1.32
 * server printed for the same values (`Invalid value: 1e-05`, `Unsupported value: "a\x01b"`,
 * `Unsupported value: map[string]interface {}{"a":2}`) or what envtest's golden replies hold
 * (`Invalid value: "null"`, `Duplicate value: map[string]interface {}{"name":"http"}`).
 */
import { describe, expect, it } from 'vitest';
import { goBadValue, goFloat, goNumber, goQuote, goSharpV } from '../src/go-format.js';

describe('goBadValue (field.Error value printing)', () => {
  it('prints nil as the quoted string "null", as apimachinery does', () => {
    expect(goBadValue(null)).toBe('"null"');
    expect(goBadValue(undefined)).toBe('"null"');
  });

  it('prints numbers as int64 or float64 with %v, booleans with %v, strings with %q', () => {
    expect(goBadValue(0)).toBe('0');
    expect(goBadValue(-51)).toBe('-51');
    expect(goBadValue(0.00001)).toBe('1e-05');
    expect(goBadValue(0.5)).toBe('0.5');
    expect(goBadValue(1234567.5)).toBe('1.2345675e+06');
    expect(goBadValue(2 ** 64)).toBe('1.8446744073709552e+19');
    expect(goBadValue(true)).toBe('true');
    expect(goBadValue('a\u0001b')).toBe('"a\\x01b"');
    expect(goBadValue('say "hi"\n')).toBe('"say \\"hi\\"\\n"');
    expect(goBadValue('é\u0085')).toBe('"é\\u0085"');
  });

  it('prints objects and lists with %#v, keys sorted', () => {
    expect(goBadValue({ a: 2 })).toBe('map[string]interface {}{"a":2}');
    expect(goBadValue({ name: 'http', b: null })).toBe(
      'map[string]interface {}{"b":interface {}(nil), "name":"http"}',
    );
    expect(goBadValue(['a', 1, [true]])).toBe('[]interface {}{"a", 1, []interface {}{true}}');
  });
});

describe('Go number and string printing', () => {
  it('goFloat is strconv g with the shortest digits', () => {
    expect(goFloat(0)).toBe('0');
    expect(goFloat(-0)).toBe('-0');
    expect(goFloat(1e6)).toBe('1e+06');
    expect(goFloat(123456)).toBe('123456');
    expect(goFloat(1e-4)).toBe('0.0001');
    expect(goFloat(1.5e-5)).toBe('1.5e-05');
    expect(goFloat(1e100)).toBe('1e+100');
    expect(goFloat(Number.NaN)).toBe('NaN');
    expect(goFloat(Number.POSITIVE_INFINITY)).toBe('+Inf');
    expect(goFloat(Number.NEGATIVE_INFINITY)).toBe('-Inf');
  });

  it('goNumber prints an integral number as an int64', () => {
    expect(goNumber(1e6)).toBe('1000000');
    expect(goNumber(1.5)).toBe('1.5');
  });

  it('goQuote escapes as strconv.Quote does', () => {
    expect(goQuote('\u0007\b\f\r\t\v\\\u007f')).toBe('"\\a\\b\\f\\r\\t\\v\\\\\\x7f"');
  });

  it('goSharpV prints nil outside and inside an interface', () => {
    expect(goSharpV(null)).toBe('<nil>');
    expect(goSharpV(null, true)).toBe('interface {}(nil)');
  });
});
