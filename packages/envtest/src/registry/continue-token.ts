/**
 * The continue token of a paged list: base64url JSON `{v, rv, start}` as apiserver's storage encodes it
 * (`storage/continue.go`): the snapshot's resourceVersion and the key the next page starts after.
 */
import { badRequest } from '../errors.js';

export function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${start}\u0000` })).toString(
    'base64url',
  );
}

export function decodeContinue(token: string): { rv: number; start: string } {
  try {
    const raw = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
      v?: string;
      rv?: number;
      start?: string;
    };
    if (raw.v !== 'meta.k8s.io/v1' || typeof raw.rv !== 'number' || typeof raw.start !== 'string')
      throw new Error('bad');
    return { rv: raw.rv, start: raw.start };
  } catch {
    throw badRequest(
      'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
    );
  }
}

/** The 410 message for a continue token whose snapshot was compacted (apiserver storage/etcd3/errors.go). */
export const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';
