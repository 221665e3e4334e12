// "Errors survive two installed copies": an error made by another copy of @kubeloop/client (a dependency
// with its own node_modules) is still recognised by this copy's instanceof and is* predicates.
import { describe, expect, it } from 'vitest';
import * as errorsEntry from '../src/entries/errors.js';
import * as transportEntry from '../src/transport/index.js';

/** This copy's errors, as users import them (`@kubeloop/client/errors`, `@kubeloop/client/transport`). */
const here = { ...errorsEntry, ...transportEntry };

/** Loads `file` again; the query string makes the module loader evaluate a second, distinct copy. */
function again<T>(file: string): Promise<T> {
  const specifier = `${file}?copy=2`;
  return import(specifier) as Promise<T>;
}

async function otherCopy() {
  const errors = await again<typeof import('../src/errors.js')>('../src/errors.ts');
  const transportErrors = await again<typeof import('../src/transport/errors.js')>(
    '../src/transport/errors.ts',
  );
  const selectors = await again<typeof import('../src/label-selector.js')>('../src/label-selector.ts');
  return { ...errors, ...transportErrors, ...selectors };
}

describe('errors across two installed copies', () => {
  it('the second copy really has distinct classes', async () => {
    const other = await otherCopy();
    expect(other.StatusError).not.toBe(here.StatusError);
  });

  it('isNotFound, asStatusError and instanceof recognise a StatusError from the other copy', async () => {
    const other = await otherCopy();
    const err = other.newNotFound({ group: '', resource: 'pods' }, 'p');
    expect(err).toBeInstanceOf(here.StatusError);
    expect(here.isNotFound(err)).toBe(true);
    expect(here.isNotFound(new Error('wrapped', { cause: err }))).toBe(true);
    expect(here.ignoreNotFound(err)).toBeUndefined();
    expect(here.asStatusError(err)?.reason).toBe('NotFound');
  });

  it('TransportError, InvalidRequestError, UnsupportedPatchTypeError and SelectorParseError from the other copy', async () => {
    const other = await otherCopy();
    expect(new other.TransportError('Timeout', 'x')).toBeInstanceOf(here.TransportError);
    expect(new other.InvalidRequestError('x')).toBeInstanceOf(here.InvalidRequestError);
    expect(new other.SelectorParseError('x')).toBeInstanceOf(here.SelectorParseError);
    const unsupported = new other.UnsupportedPatchTypeError({ code: 415 }, 'strategic', 'Widget');
    expect(unsupported).toBeInstanceOf(here.UnsupportedPatchTypeError);
    expect(unsupported).toBeInstanceOf(here.StatusError);
    expect(here.isUnsupportedMediaType(unsupported)).toBe(true);
  });

  it('classes stay distinct from each other: a StatusError is not an UnsupportedPatchTypeError', () => {
    const plain = here.newNotFound({ group: '', resource: 'pods' }, 'p');
    expect(plain).not.toBeInstanceOf(here.UnsupportedPatchTypeError);
    // a subclass without a mark of its own is tested by its prototype chain, not by its parent's mark
    expect(plain).not.toBeInstanceOf(here.WatchStatusError);
    expect(new here.WatchStatusError({ code: 429 })).toBeInstanceOf(here.StatusError);
    expect(new here.InvalidRequestError('x')).not.toBeInstanceOf(here.StatusError);
    expect({}).not.toBeInstanceOf(here.TransportError);
  });
});
