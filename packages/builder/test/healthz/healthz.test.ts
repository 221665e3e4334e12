import { afterEach, describe, expect, it } from 'vitest';
import {
  BindAddressError,
  cacheSyncCheck,
  HealthCheckError,
  HealthProbeServer,
  parseBindAddress,
  ping,
} from '../../src/healthz/index.js';

const stops: AbortController[] = [];
afterEach(() => {
  for (const s of stops.splice(0)) s.abort();
});

async function serve(probes: HealthProbeServer): Promise<string> {
  const stop = new AbortController();
  stops.push(stop);
  void probes.start(stop.signal);
  await probes.ready(stop.signal);
  return `http://${probes.address()}`;
}

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

describe('health probes (controller-runtime pkg/healthz) over HTTP', () => {
  it('parses bind addresses; "0" disables; a bad one is a typed error naming the option', () => {
    expect(parseBindAddress(':8081', 'x')).toEqual({ host: undefined, port: 8081 });
    expect(parseBindAddress('127.0.0.1:0', 'x')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseBindAddress('[::1]:9090', 'x')).toEqual({ host: '::1', port: 9090 });
    expect(parseBindAddress('0', 'x')).toBeUndefined();
    expect(() => parseBindAddress('8080', 'healthProbeBindAddress')).toThrow(BindAddressError);
    expect(() => parseBindAddress('host:99999', 'healthProbeBindAddress')).toThrow(/healthProbeBindAddress/);
    expect(new HealthProbeServer({ bindAddress: '0' }).enabled).toBe(false);
  });

  it('aggregates named checks with ?verbose and ?exclude; subpaths run one check; reasons withheld unless public', async () => {
    const probes = new HealthProbeServer({ bindAddress: '127.0.0.1:0' });
    let dbUp = true;
    probes.addHealthzCheck('ping', ping);
    probes.addReadyzCheck('db', () => {
      if (!dbUp) throw new Error('secret connection string in here');
    });
    probes.addReadyzCheck('warm', () => {
      throw new HealthCheckError('cache warming');
    });
    expect(() => probes.addReadyzCheck('db', ping)).toThrow(/already added/);
    expect(() => probes.addReadyzCheck('a/b', ping)).toThrow(HealthCheckError);
    const base = await serve(probes);

    expect(await get(`${base}/healthz`)).toEqual({ status: 200, body: 'ok' });
    expect(await get(`${base}/healthz?verbose`)).toEqual({
      status: 200,
      body: '[+]ping ok\nhealthz check passed\n',
    });
    expect(await get(`${base}/readyz`)).toEqual({
      status: 503,
      body: '[+]db ok\n[-]warm failed: cache warming\nreadyz check failed\n',
    });
    expect(await get(`${base}/readyz?exclude=warm`)).toEqual({ status: 200, body: 'ok' });
    expect(await get(`${base}/readyz?exclude=warm&exclude=nope&verbose=1`)).toEqual({
      status: 200,
      body: '[+]db ok\n[+]warm excluded: ok\nwarn: some health checks cannot be excluded: no matches for "nope"\nreadyz check passed\n',
    });
    dbUp = false;
    const down = await get(`${base}/readyz?exclude=warm`);
    expect(down.status).toBe(503);
    expect(down.body).toContain('[-]db failed: reason withheld');
    expect(down.body).not.toContain('secret');
    expect(await get(`${base}/readyz/db`)).toEqual({
      status: 503,
      body: 'readyz check db failed: reason withheld\n',
    });
    expect((await get(`${base}/healthz/ping`)).status).toBe(200);
    expect((await get(`${base}/readyz/missing`)).status).toBe(404);
    expect((await get(`${base}/other`)).status).toBe(404);
  });

  it('with no checks reports ping; custom endpoint names', async () => {
    const probes = new HealthProbeServer({
      bindAddress: '127.0.0.1:0',
      livenessEndpointName: '/livez',
      readinessEndpointName: 'ready/',
    });
    const base = await serve(probes);
    expect(await get(`${base}/livez?verbose`)).toEqual({
      status: 200,
      body: '[+]ping ok\nhealthz check passed\n',
    });
    expect((await get(`${base}/ready`)).status).toBe(200);
    expect((await get(`${base}/healthz`)).status).toBe(404);
  });

  it('C28 (unit): the cache-sync check fails before the cache starts and while an informer is unsynced, naming it when the cache can', async () => {
    let started = false;
    let synced = false;
    const cache = {
      isStarted: () => started,
      waitForCacheSync: async (signal?: AbortSignal) => synced || !signal?.aborted,
      unsyncedInformers: () => (synced ? [] : ['v1/Secret']),
    };
    const probes = new HealthProbeServer({ bindAddress: '127.0.0.1:0' });
    probes.addReadyzCheck('informers', cacheSyncCheck(cache));
    const base = await serve(probes);
    expect(await get(`${base}/readyz`)).toEqual({
      status: 503,
      body: '[-]informers failed: the cache has not started\nreadyz check failed\n',
    });
    started = true;
    expect((await get(`${base}/readyz`)).body).toContain(
      '[-]informers failed: informers not synced: v1/Secret',
    );
    synced = true;
    expect(await get(`${base}/readyz`)).toEqual({ status: 200, body: 'ok' });
  });

  it('a port already taken rejects start and ready', async () => {
    const first = new HealthProbeServer({ bindAddress: '127.0.0.1:0' });
    const base = await serve(first);
    const port = Number(new URL(base).port);
    const second = new HealthProbeServer({ bindAddress: `127.0.0.1:${port}` });
    const stop = new AbortController();
    stops.push(stop);
    await expect(second.start(stop.signal)).rejects.toThrow(/EADDRINUSE/);
    await expect(second.ready(stop.signal)).rejects.toThrow(/EADDRINUSE/);
  });

  it('stops serving when its signal aborts, even with a keep-alive connection open', async () => {
    const probes = new HealthProbeServer({ bindAddress: '127.0.0.1:0' });
    const stop = new AbortController();
    const run = probes.start(stop.signal);
    await probes.ready(stop.signal);
    const base = `http://${probes.address()}`;
    expect((await get(`${base}/healthz`)).status).toBe(200);
    stop.abort();
    await run;
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });
});
