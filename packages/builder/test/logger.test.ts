import { StatusError } from '@kubeloop/client';
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
});
