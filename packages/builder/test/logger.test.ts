import net from 'node:net';
import { InformerSyncError } from '@kubeloop/cache';
import { StatusError } from '@kubeloop/client';
import { Transport } from '@kubeloop/client/transport';
import { describe, expect, it } from 'vitest';
import { newLogger } from '../src/index.js';

function capture() {
  const lines: string[] = [];
  const log = newLogger({ destination: { write: (s: string) => lines.push(s) } });
  return { log, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('newLogger', () => {
  it('logs a StatusError with its Status as sent by the server (not as a nested error with type/stack)', () => {
    const { log, records } = capture();
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure' as const,
      message: 'Operation cannot be fulfilled on widgets.example.com "w1": the object has been modified',
      reason: 'Conflict',
      details: { name: 'w1', group: 'example.com', kind: 'widgets' },
      code: 409,
    };
    log.error({ err: new StatusError(status) }, 'Reconciler error');
    const err = records()[0]?.err as Record<string, unknown>;
    expect(err.type).toBe('StatusError');
    expect(err.message).toBe(status.message);
    expect(String(err.stack)).toContain('StatusError');
    expect(err.status).toEqual(status);
  });

  it('still serializes a nested Error (cause) and redacts tokens', () => {
    const { log, records } = capture();
    const err = new Error('outer', { cause: new TypeError('inner') });
    log.error({ err, token: 'secret-token' }, 'failed');
    const rec = records()[0] as { err: { message: string; stack: string }; token: string };
    expect(rec.err.message).toBe('outer: inner');
    expect(rec.err.stack).toContain('caused by: TypeError: inner');
    expect(rec.token).toBe('[redacted]');
  });

  it('names a transport failure and its cause once: the cause is not appended again when the message already says it', async () => {
    // A port nothing listens on: the real "connect ECONNREFUSED" of the socket, wrapped by the transport.
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as net.AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const t = new Transport({
      host: `https://127.0.0.1:${port}`,
      tlsClientConfig: { insecure: true },
      qps: -1,
      burst: 0,
      timeoutMs: 0,
      userAgent: 'logger-test',
    });
    const failure = (await t
      .request({ method: 'GET', path: '/api/v1/pods' })
      .catch((e: unknown) => e)) as Error;
    await t.close({ force: true });
    const refused = `connect ECONNREFUSED 127.0.0.1:${port}`;
    expect(failure.message).toBe(`GET 127.0.0.1:${port}/api/v1/pods: ${refused}`);
    const { log, records } = capture();
    log.error({ err: failure }, 'request failed');
    const wrapped = new InformerSyncError('/v1, Kind=Pod', false, { cause: failure });
    log.error({ err: wrapped }, 'not synced');
    const [direct, informer] = records().map((r) => (r.err as { message: string }).message);
    expect(direct).toBe(failure.message);
    expect(informer).toBe(wrapped.message);
    for (const m of [direct!, informer!]) {
      expect(m.split(refused)).toHaveLength(2);
      expect(m.split('/api/v1/pods')).toHaveLength(2);
    }
  });

  it('appends a cause whose message the outer one does not contain, as pino does', () => {
    const { log, records } = capture();
    const inner = new Error('socket hang up');
    log.error({ err: new Error('GET /x: failed', { cause: new Error('middle', { cause: inner }) }) }, 'x');
    const [rec] = records();
    expect((rec?.err as { message?: string } | undefined)?.message).toBe(
      'GET /x: failed: middle: socket hang up',
    );
  });
});
