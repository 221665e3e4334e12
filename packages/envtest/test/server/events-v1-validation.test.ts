/**
 * events.k8s.io/v1 Event validation as kube-apiserver's ValidateEventCreate/ValidateEventUpdate:
 * series.count ≥ 2 with a lastObservedTime, eventTime, type Normal|Warning, the reporting fields, no deprecated
 * fields on create; on update a changed series is re-validated and the rest is immutable. core/v1 Events keep the
 * lenient legacy rules.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventV1, startTestServer, type TestServer } from './helpers.js';

const V1 = '/apis/events.k8s.io/v1/namespaces/default/events';

describe('events.k8s.io/v1 Event validation', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('accepts a well-formed event and a series of count 2', async () => {
    expect((await t.req('POST', V1, eventV1('ok'))).status).toBe(201);
    const series = eventV1('series-ok', {
      series: { count: 2, lastObservedTime: '2024-01-01T00:00:01.000000Z' },
    });
    expect((await t.req('POST', V1, series)).status).toBe(201);
  });

  it('refuses series.count below 2 and a series without lastObservedTime, with the server causes', async () => {
    const r = await t.req('POST', V1, eventV1('series-bad', { series: { count: 1 } }));
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      'Event.events.k8s.io "series-bad" is invalid: [series.count: Invalid value: "": should be at least 2, series.lastObservedTime: Required value]',
    );
    expect(r.body.details).toEqual({
      name: 'series-bad',
      group: 'events.k8s.io',
      kind: 'Event',
      causes: [
        {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: "": should be at least 2',
          field: 'series.count',
        },
        { reason: 'FieldValueRequired', message: 'Required value', field: 'series.lastObservedTime' },
      ],
    });
  });

  it('refuses a missing eventTime, an unknown type, missing reporting fields and deprecated fields', async () => {
    const r = await t.req('POST', V1, {
      ...eventV1('many'),
      eventTime: undefined,
      type: 'Info',
      action: '',
      deprecatedCount: 3,
    });
    expect(r.status).toBe(422);
    expect(r.body.details.causes.map((c: { field: string }) => c.field)).toEqual([
      'eventTime',
      'type',
      'count',
    ]);
    const noReporting = await t.req('POST', V1, {
      ...eventV1('noreport'),
      reportingInstance: '',
      action: '',
    });
    expect(noReporting.body.details.causes).toEqual([
      { reason: 'FieldValueRequired', message: 'Required value', field: 'reportingInstance' },
      { reason: 'FieldValueRequired', message: 'Required value', field: 'action' },
    ]);
    const longNote = await t.req('POST', V1, eventV1('long', { note: 'x'.repeat(1025) }));
    expect(longNote.body.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "": can have at most 1024 characters',
        field: 'message',
      },
    ]);
  });

  it('on update re-validates a changed series and keeps the rest immutable', async () => {
    const created = (await t.req('POST', V1, eventV1('upd'))).body;
    const badSeries = await t.req('PUT', `${V1}/upd`, { ...created, series: { count: 0 } });
    expect(badSeries.body.details.causes.map((c: { field: string }) => c.field)).toEqual([
      'series.count',
      'series.lastObservedTime',
    ]);
    const renamed = await t.req('PUT', `${V1}/upd`, { ...created, reason: 'Other' });
    expect(renamed.body.details.causes).toEqual([
      { reason: 'FieldValueInvalid', message: 'Invalid value: "Other": field is immutable', field: 'reason' },
    ]);
    const series = { count: 2, lastObservedTime: '2024-01-01T00:00:02.000000Z' };
    expect((await t.req('PUT', `${V1}/upd`, { ...created, series })).status).toBe(200);
  });

  it('keeps core/v1 Events lenient (no series or reporting checks)', async () => {
    const r = await t.req('POST', '/api/v1/namespaces/default/events', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'legacy' },
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
      reason: 'Old',
      message: 'm',
      count: 1,
    });
    expect(r.status).toBe(201);
  });
});
