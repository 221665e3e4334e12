// An unpaged list answer longer than a JavaScript string can hold
// (~512 MiB; the watch cache answers resourceVersion=0 whole and ignores limit) failed every time with
// ERR_STRING_TOO_LONG, so the informer of a large cluster backed off and relisted forever without syncing. The
// reflector now lists the most recent state in pages (resourceVersion="", limit) and keeps paging.
import { isReplyTooLarge } from '@kubeloop/client/apiutil';
import { UnexpectedResponseError } from '@kubeloop/client/errors';
import { FakeClock } from '@kubeloop/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type ListCallOptions, Reflector } from '../src/index.js';
import { expiredEvent, FakeServer, RecordingStore } from './support/fake-server.js';

const running: AbortController[] = [];
afterEach(() => {
  for (const ac of running.splice(0)) ac.abort();
});

/** What readJsonReply throws when the body does not fit in one string. */
function tooLong(): UnexpectedResponseError {
  const cause = Object.assign(new Error('Cannot create a string longer than 0x1fffffe8 characters'), {
    code: 'ERR_STRING_TOO_LONG',
  });
  return new UnexpectedResponseError(
    'GET /api/v1/configmaps: the reply is larger than a JavaScript string can hold',
    {
      cause,
    },
  );
}

/** A FakeServer whose unpaged (or watch-cache) answers are "too large to decode". */
class HugeServer extends FakeServer {
  override async list(o: ListCallOptions) {
    const servedWhole = !o.continue && (!o.limit || o.resourceVersion === '0');
    if (servedWhole) {
      this.listCalls.push({ ...o });
      throw tooLong();
    }
    return super.list(o);
  }
}

describe('Reflector: an unpaged list too large to decode (lists of any size)', () => {
  it('isReplyTooLarge finds ERR_STRING_TOO_LONG through the cause chain', () => {
    expect(isReplyTooLarge(tooLong())).toBe(true);
    expect(isReplyTooLarge(new Error('x'))).toBe(false);
  });

  it('lists again at once in pages at resourceVersion="" and syncs; a relist stays paged', async () => {
    const srv = new HugeServer(7);
    const store = new RecordingStore();
    const clock = new FakeClock();
    srv.watchFaults.push({ events: [expiredEvent] });
    const r = new Reflector(srv, store, { clock, random: () => 0, pageSize: 3 });
    const ac = new AbortController();
    running.push(ac);
    const done = r.run(ac.signal);
    await vi.waitFor(() => expect(store.replaced).toBe(1), { timeout: 2000, interval: 2 });
    expect(store.items.size).toBe(7);
    const calls = srv.listCalls.map(
      (c) => `${c.resourceVersion ?? ''}|${c.limit ?? 0}|${c.continue ? 'c' : ''}`,
    );
    expect(calls).toEqual(['0|3|', '|3|', '|3|c', '|3|c']);
    // After a watch 410 the relist at the last resourceVersion is paged too (an unpaged one cannot be decoded);
    // it comes after the reflector's backoff, on the fake clock.
    await vi.waitFor(
      () => {
        clock.step(1000);
        expect(store.replaced).toBe(2);
      },
      { timeout: 2000, interval: 2 },
    );
    expect(srv.listCalls[4]).toMatchObject({ resourceVersion: '8', limit: 3 });
    expect(store.items.size).toBe(7);
    ac.abort();
    await done;
  });
});
