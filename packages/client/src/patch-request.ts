import { InvalidRequestError } from './errors.js';
import { PATCH_CONTENT_TYPES, type Patch, type PatchOptions } from './options.js';

/**
 * Checks a PATCH before it is sent and completes its query (controller-runtime `client.Patch` and
 * `PatchOptions`): server-side apply needs a `fieldManager` in `query`; `force` is only valid for apply and
 * adds `force=true` to `query`. Returns the request's Content-Type for `patch.type`.
 * @throws InvalidRequestError for an unknown patch type, apply without a field manager, or force without apply.
 */
export function preparePatch(patch: Patch, query: URLSearchParams, options?: PatchOptions): string {
  const contentType = PATCH_CONTENT_TYPES[patch.type];
  if (!contentType) throw new InvalidRequestError(`unknown patch type ${JSON.stringify(patch.type)}`);
  if (patch.type === 'apply' && !query.get('fieldManager'))
    throw new InvalidRequestError(
      'server-side apply needs a field manager (options.fieldManager or the client fieldOwner)',
    );
  if (options?.force) {
    if (patch.type !== 'apply') throw new InvalidRequestError('force is only valid for server-side apply');
    query.set('force', 'true');
  }
  return contentType;
}
