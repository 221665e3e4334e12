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
function tooLongText(): never {
  throw Object.assign(new Error('Cannot create a string longer than 0x1fffffe8 characters'), {
    code: 'ERR_STRING_TOO_LONG',
  });
}

const mapper = new StaticRESTMapper([
  {
    gvk: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    scope: 'Namespaced',
  },
]);

/**
 * A reply longer than a JavaScript string can hold (~512 MiB: an unpaged list of a large cluster, as the
 * watch cache answers resourceVersion=0) failed with Node's bare ERR_STRING_TOO_LONG. Where the reply must be
 * read whole (one object) it is an UnexpectedResponseError naming the request, with that error as cause, so a
 * caller can tell it apart (isReplyTooLarge); a list is decoded as its bytes arrive and never needs the string.
 */
describe('a reply too large for one string', () => {
  it('get: UnexpectedResponseError naming the request, ERR_STRING_TOO_LONG as cause, isReplyTooLarge', async () => {
    const transport: HttpTransport = {
      async request(): Promise<HttpResponse> {
        return {
          status: 200,
          headers: {},
          body: { text: async () => tooLongText(), async *[Symbol.asyncIterator]() {} },
        };
      },
      close: async () => {},
    };
    const client = new ApiClient({ transport, restMapper: mapper });
    const err = await client.get(ConfigMap, { namespace: 'default', name: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    expect((err as Error).message).toContain('GET /api/v1/namespaces/default/configmaps/x');
    expect(((err as Error).cause as { code?: string }).code).toBe('ERR_STRING_TOO_LONG');
    expect(isReplyTooLarge(err)).toBe(true);
  });

  it("list with listDecoding: 'whole' (the body as one string): the same error as get", async () => {
    const transport: HttpTransport = {
      async request(): Promise<HttpResponse> {
        return {
          status: 200,
          headers: {},
          body: { text: async () => tooLongText(), async *[Symbol.asyncIterator]() {} },
        };
      },
      close: async () => {},
    };
    const client = new ApiClient({ transport, restMapper: mapper, listDecoding: 'whole' });
    const err = await client.list(ConfigMap, { namespace: 'default' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    expect((err as Error).message).toContain('GET /api/v1/namespaces/default/configmaps');
    expect(isReplyTooLarge(err)).toBe(true);
    expect(
      () => new ApiClient({ transport, restMapper: mapper, listDecoding: 'lazy' as unknown as 'whole' }),
    ).toThrow(/listDecoding: must be 'stream' or 'whole', got "lazy"/);
  });

  it('list: decoded from the body chunk by chunk, never as one string', async () => {
    const items = Array.from({ length: 50 }, (_, i) => ({
      metadata: { name: `cm-${i}`, namespace: 'default' },
    }));
    const body = Buffer.from(
      JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items }),
    );
    const transport: HttpTransport = {
      async request(): Promise<HttpResponse> {
        return {
          status: 200,
          headers: {},
          body: {
            text: async () => tooLongText(),
            async *[Symbol.asyncIterator]() {
              for (let i = 0; i < body.length; i += 97) yield body.subarray(i, i + 97);
            },
          },
        };
      },
      close: async () => {},
    };
    const client = new ApiClient({ transport, restMapper: mapper });
    const list = await client.list(ConfigMap, { namespace: 'default' });
    expect(list.metadata.resourceVersion).toBe('7');
    expect(list.items.map((o) => o.metadata?.name)).toEqual(items.map((o) => o.metadata.name));
    expect(list.items[3]).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
  });

  it('list: a body that is not JSON is an UnexpectedResponseError naming the request', async () => {
    const transport: HttpTransport = {
      async request(): Promise<HttpResponse> {
        return {
          status: 200,
          headers: {},
          body: {
            text: async () => tooLongText(),
            async *[Symbol.asyncIterator]() {
              yield Buffer.from('{"items":[{"a":');
              yield Buffer.from('}]}');
            },
          },
        };
      },
      close: async () => {},
    };
    const client = new ApiClient({ transport, restMapper: mapper });
    const err = await client.list(ConfigMap, { namespace: 'default' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    expect((err as Error).message).toContain(
      'GET /api/v1/namespaces/default/configmaps: the reply is not JSON',
    );
  });
});
