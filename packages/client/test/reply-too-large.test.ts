import { describe, expect, it } from 'vitest';
import {
  type HttpResponse,
  type HttpTransport,
  isReplyTooLarge,
  StaticRESTMapper,
} from '../src/entries/apiutil.js';
import { UnexpectedResponseError } from '../src/entries/errors.js';
import { ApiClient, ConfigMap } from '../src/index.js';

/**
 * A reply longer than a JavaScript string can hold (~512 MiB: an unpaged list of a large cluster, as the
 * watch cache answers resourceVersion=0) failed with Node's bare ERR_STRING_TOO_LONG. It is an
 * UnexpectedResponseError naming the request, with that error as cause, so a reflector can tell it apart
 * (isReplyTooLarge) and list in pages.
 */
describe('a reply too large for one string', () => {
  it('list: UnexpectedResponseError naming the request, ERR_STRING_TOO_LONG as cause, isReplyTooLarge', async () => {
    const transport: HttpTransport = {
      async request(): Promise<HttpResponse> {
        return {
          status: 200,
          headers: {},
          body: {
            text: async () => {
              throw Object.assign(new Error('Cannot create a string longer than 0x1fffffe8 characters'), {
                code: 'ERR_STRING_TOO_LONG',
              });
            },
            async *[Symbol.asyncIterator]() {},
          },
        };
      },
      close: async () => {},
    };
    const mapper = new StaticRESTMapper([
      {
        gvk: { group: '', version: 'v1', kind: 'ConfigMap' },
        resource: { group: '', version: 'v1', resource: 'configmaps' },
        scope: 'Namespaced',
      },
    ]);
    const client = new ApiClient({ transport, restMapper: mapper });
    const err = await client.list(ConfigMap, { namespace: 'default' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    expect((err as Error).message).toContain('GET /api/v1/namespaces/default/configmaps');
    expect(((err as Error).cause as { code?: string }).code).toBe('ERR_STRING_TOO_LONG');
    expect(isReplyTooLarge(err)).toBe(true);
  });
});
