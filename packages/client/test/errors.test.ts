import { describe, expect, it } from 'vitest';
import { isExpired, isTooManyRequests, newNotFound } from '../src/entries/errors.js';
import { statusErrorFromResponse } from '../src/errors.js';
import {
  ignoreNotFound,
  isAlreadyExists,
  isConflict,
  isGone,
  isNotFound,
  StatusError,
} from '../src/index.js';

describe('API errors', () => {
  it('matches by reason first, by code only when the reason is unknown', () => {
    const nf = statusErrorFromResponse(
      404,
      JSON.stringify({ kind: 'Status', reason: 'NotFound', code: 404, message: 'pods "a" not found' }),
      'GET x',
    );
    expect(isNotFound(nf)).toBe(true);
    expect(nf.code).toBe('ERR_KUBE_STATUS');
    // A 404 whose reason says something else is not NotFound.
    const odd = new StatusError({ kind: 'Status', reason: 'Conflict', code: 404 });
    expect(isNotFound(odd)).toBe(false);
    expect(isConflict(odd)).toBe(true);
    // Unknown reason: the code decides.
    expect(isNotFound(new StatusError({ kind: 'Status', reason: 'Weird', code: 404 }))).toBe(true);
    expect(isAlreadyExists(new StatusError({ kind: 'Status', reason: 'AlreadyExists', code: 409 }))).toBe(
      true,
    );
    expect(isConflict(new StatusError({ kind: 'Status', reason: 'AlreadyExists', code: 409 }))).toBe(false);
  });

  it('synthesises a Status for non-Status bodies, with the reason from the code', () => {
    const e = statusErrorFromResponse(410, '<html>gone</html>', 'GET /api/v1/pods');
    expect(e.reason).toBe('Gone');
    expect(isGone(e)).toBe(true);
    expect(isExpired(e)).toBe(true);
    expect(e.message).toContain('GET /api/v1/pods');
    expect(isExpired(new StatusError({ kind: 'Status', reason: 'Expired', code: 410 }))).toBe(true);
    expect(isTooManyRequests(statusErrorFromResponse(429, '', 'GET x'))).toBe(true);
  });

  it('finds wrapped errors and ignores NotFound', () => {
    const nf = newNotFound({ group: 'apps', resource: 'deployments' }, 'web');
    expect(nf.message).toBe('deployments.apps "web" not found');
    expect(isNotFound(new Error('wrapped', { cause: nf }))).toBe(true);
    expect(ignoreNotFound(nf)).toBeUndefined();
    const other = new Error('x');
    expect(ignoreNotFound(other)).toBe(other);
  });
});
