/**
 * Unit tests of the golden shape comparator itself, on the real golden files: a golden matches itself and a
 * copy whose run-to-run values were re-rolled, and every structural mutation of it is caught.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  compareExchange,
  type GoldenExchange,
  goldenNames,
  loadBattery,
  loadGolden,
  normalizeMediaType,
  type ObservedExchange,
  WIRE_MISSING,
  WIRE_REQUIRED,
} from '../support/golden.js';
import { compareShape, maskMessage, maskMessageStrict } from '../support/shape.js';

const names = goldenNames();

// The ground truth lives outside this repository; without it the cases below are not generated.
it.skipIf(WIRE_MISSING !== undefined && !WIRE_REQUIRED)('reads the golden wire data', () => {
  expect(WIRE_MISSING).toBeUndefined();
});
const battery = new Map(loadBattery().map((s) => [s.name, s]));

/** Turns a golden into the exchange a perfect server would produce (optionally transforming the body/events). */
function asObserved(g: GoldenExchange, transform: (v: unknown) => unknown = (v) => v): ObservedExchange {
  const r = g.response;
  const headers: Record<string, string | string[]> = {};
  if (r.headers['Content-Type'] !== null) headers['content-type'] = r.headers['Content-Type'];
  if (r.headers['Audit-Id']) headers['audit-id'] = randomUUID();
  if (r.headers.Warning !== null) headers.warning = [...r.headers.Warning];
  if (r.headers['Retry-After'] !== null) headers['retry-after'] = r.headers['Retry-After'];
  if (r.headers['Transfer-Encoding'] !== null) headers['transfer-encoding'] = r.headers['Transfer-Encoding'];
  if (r.body_type === 'watch' && g.watch) {
    const events = transform(structuredClone(g.watch.events)) as GoldenExchange['watch'] extends infer W
      ? W extends { events: infer E }
        ? E
        : never
      : never;
    return {
      status: r.status,
      headers,
      text: events.map((e) => `${JSON.stringify(e)}\n`).join(''),
      watch: { events, endedBy: g.watch.framing.ended_by, oneObjectPerLine: true, newlineTerminated: true },
    };
  }
  const body = transform(structuredClone(r.body));
  const text = r.body_type === 'json' ? JSON.stringify(body) : String(body ?? '');
  return { status: r.status, headers, text };
}

const GEN = 'bcdfghjklmnpqrstvwxz2456789';
function rerollName(): string {
  let s = 'wire-gen-';
  for (let i = 0; i < 5; i++) s += GEN[Math.floor(Math.random() * GEN.length)];
  return s;
}

/** Replaces every value the golden README lists as varying with a different value of the same type. */
function reroll(v: unknown, key?: string): unknown {
  if (Array.isArray(v)) return v.map((x) => reroll(x));
  if (typeof v === 'object' && v !== null) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, reroll(x, k)]));
  }
  if (typeof v !== 'string') return v;
  if (key === 'uid') return randomUUID();
  if (key === 'resourceVersion') return String(Number(v) + 1000);
  if (key === 'continue') return Buffer.from(`{"rv":${Math.random()}}`).toString('base64');
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(v)) return '2031-02-03T04:05:06Z';
  if (/^wire-gen-[a-z0-9]{5}$/.test(v)) return rerollName();
  if (key === 'message') return v.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, () => randomUUID());
  return v;
}

/** Every path (as key lists) to an object member inside `v`. */
function memberPaths(v: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [];
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) out.push(...memberPaths(x, [...prefix, i]));
  } else if (typeof v === 'object' && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      out.push([...prefix, k]);
      out.push(...memberPaths(x, [...prefix, k]));
    }
  }
  return out;
}

function withDeleted(root: unknown, path: (string | number)[]): unknown {
  const copy = structuredClone(root);
  let cur = copy as Record<string | number, unknown>;
  for (const seg of path.slice(0, -1)) cur = cur[seg] as Record<string | number, unknown>;
  delete cur[path[path.length - 1] as string | number];
  return copy;
}

describe.skipIf(WIRE_MISSING !== undefined && !WIRE_REQUIRED)('golden shape comparator', () => {
  it('finds the shared golden folder', () => {
    expect(names.length).toBeGreaterThan(90);
  });

  it.each(names)('%s matches itself and a copy with re-rolled uids, RVs, timestamps and names', (name) => {
    const g = loadGolden(name);
    const step = battery.get(name);
    expect(compareExchange(g, asObserved(g), step)).toEqual([]);
    expect(
      compareExchange(
        g,
        asObserved(g, (b) => reroll(b)),
        step,
      ),
    ).toEqual([]);
  });

  it.each(names.filter((n) => loadGolden(n).response.body_type === 'json'))(
    '%s: deleting any member anywhere in the body is a difference',
    (name) => {
      const g = loadGolden(name);
      const step = battery.get(name);
      const paths = memberPaths(g.response.body);
      for (const p of paths) {
        const diffs = compareExchange(
          g,
          asObserved(g, (b) => withDeleted(b, p)),
          step,
        );
        expect(diffs.length, `deleting ${p.join('.')} went unnoticed`).toBeGreaterThan(0);
      }
    },
    // thousands of deletions on the large discovery documents
    30_000,
  );

  it('catches an added key, a changed type, a changed reason/code/kind and a shorter list', () => {
    const g = loadGolden('pod-list');
    const body = g.response.body as {
      items: Array<Record<string, unknown>>;
      metadata: Record<string, unknown>;
    };
    const withExtra = { ...body, extra: 1 };
    expect(compareShape(body, withExtra)).toEqual([
      { path: '$.extra', expected: 'absent', actual: 'number 1' },
    ]);
    const typeChanged = { ...body, metadata: { ...body.metadata, resourceVersion: 12 } };
    expect(compareShape(body, typeChanged)[0]?.path).toBe('$.metadata.resourceVersion');
    const shorter = { ...body, items: body.items.slice(1) };
    expect(compareShape(body, shorter).length).toBeGreaterThan(0);
    expect(compareShape(body, { ...body, kind: 'ConfigMapList' })[0]?.path).toBe('$.kind');

    const s = loadGolden('pod-get-missing-404').response.body as Record<string, unknown>;
    expect(compareShape(s, { ...s, reason: 'Gone' })[0]?.path).toBe('$.reason');
    expect(compareShape(s, { ...s, code: 410 })[0]?.path).toBe('$.code');
    expect(compareShape(s, { ...s, message: 'pods "nope" is missing' })[0]?.path).toBe('$.message');
  });

  it('catches a status code, Content-Type parameter, missing Audit-Id or unexpected Warning', () => {
    const g = loadGolden('discovery-apis-aggregated');
    const ok = asObserved(g);
    expect(compareExchange(g, { ...ok, status: 201 }, undefined)[0]?.path).toBe('status');
    const plain = { ...ok, headers: { ...ok.headers, 'content-type': 'application/json' } };
    expect(compareExchange(g, plain, undefined).map((d) => d.path)).toContain('header Content-Type');
    const noAudit = { ...ok, headers: { 'content-type': ok.headers['content-type'] } };
    expect(compareExchange(g, noAudit, undefined).map((d) => d.path)).toContain('header Audit-Id');
    const warned = { ...ok, headers: { ...ok.headers, warning: '299 - "x"' } };
    expect(compareExchange(g, warned, undefined).map((d) => d.path)).toContain('header Warning');
  });

  it('catches a different watch event sequence, a changed event object and the wrong end of stream', () => {
    const g = loadGolden('watch-from-list-rv-bookmarks');
    const step = battery.get(g.step);
    const ok = asObserved(g);
    const events = ok.watch?.events ?? [];
    const dropped = {
      ...ok,
      watch: { ...(ok.watch as NonNullable<ObservedExchange['watch']>), events: events.slice(0, 3) },
    };
    expect(compareExchange(g, dropped, step).map((d) => d.path)).toContain('watch event types');
    const byServer = {
      ...ok,
      watch: { ...(ok.watch as NonNullable<ObservedExchange['watch']>), endedBy: 'server' as const },
    };
    expect(compareExchange(g, byServer, step).map((d) => d.path)).toContain('watch ended_by');
    const noStatus = asObserved(g, (evs) =>
      (evs as Array<{ object: Record<string, unknown> }>).map((e) => ({
        ...e,
        object: { ...e.object, status: undefined },
      })),
    );
    expect(compareExchange(g, noStatus, step).length).toBeGreaterThan(0);
    const withBookmark = {
      ...ok,
      watch: {
        ...(ok.watch as NonNullable<ObservedExchange['watch']>),
        events: [{ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: {} } }, ...events],
      },
    };
    expect(compareExchange(g, withBookmark, step)).toEqual([]);
  });

  it('masks only the varying parts of Status messages', () => {
    const a =
      'Operation cannot be fulfilled on Pod "p1": the UID in the precondition (00000000-0000-0000-0000-000000000000) does not match the UID in record (4d031b6d-0da7-4d28-a8d7-86b4df9ed70d).';
    const b = a.replace('4d031b6d-0da7-4d28-a8d7-86b4df9ed70d', randomUUID());
    expect(maskMessage(a)).toBe(maskMessage(b));
    expect(maskMessage(a)).not.toBe(maskMessage(a.replace('Pod', 'pods')));
    expect(maskMessage('pods "wire-gen-d5lt9" not found')).toBe(
      maskMessage('pods "wire-gen-x2b4z" not found'),
    );
  });

  it('normalises media types: parameter order and charset do not matter, other parameters do', () => {
    expect(normalizeMediaType('text/plain; charset=utf-8')).toBe('text/plain');
    expect(normalizeMediaType('application/json;v=v2;g=apidiscovery.k8s.io;as=APIGroupDiscoveryList')).toBe(
      normalizeMediaType('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'),
    );
    expect(normalizeMediaType('application/json;as=Table')).not.toBe(normalizeMediaType('application/json'));
  });

  it('tolerates fewer discovery entries only where told to', () => {
    const g = loadGolden('discovery-apis').response.body as { groups: unknown[] };
    const fewer = { ...g, groups: g.groups.slice(0, 3) };
    expect(compareShape(g, fewer).length).toBeGreaterThan(0);
    expect(compareShape(g, fewer, { subsetAt: ['$.groups'] })).toEqual([]);
    const invented = { ...g, groups: [...g.groups.slice(0, 3), { name: 'made.up', versions: [] }] };
    expect(compareShape(g, invented, { subsetAt: ['$.groups'] }).length).toBeGreaterThan(0);
  });

  it.each(names)('%s matches itself strictly, also with re-rolled run-to-run values', (name) => {
    const g = loadGolden(name);
    const step = battery.get(name);
    expect(
      compareExchange(
        g,
        asObserved(g, (b) => reroll(b)),
        step,
        { strict: true },
      ),
    ).toEqual([]);
  });

  it('strict mode catches managedFields order, a cause message, a details name and a Warning text', () => {
    const cm = loadGolden('watch-list-cm-for-rv').response.body as {
      items: Array<{ metadata: { managedFields: unknown[] } }>;
    };
    const swapped = structuredClone(cm);
    const mf = swapped.items.find((i) => i.metadata.managedFields.length > 1)?.metadata.managedFields ?? [];
    mf.reverse();
    expect(compareShape(cm, swapped)).toEqual([]);
    expect(compareShape(cm, swapped, { strict: true }).map((d) => d.path)).toEqual([
      '$.items[metadata.name=cm-apply].metadata.managedFields (order)',
    ]);

    const invalid = loadGolden('pod-create-invalid-422').response.body as {
      details: { name: string; causes: Array<{ message: string }> };
    };
    const otherCause = structuredClone(invalid);
    (otherCause.details.causes[1] as { message: string }).message = 'Required value: image';
    expect(compareShape(invalid, otherCause)).toEqual([]);
    expect(compareShape(invalid, otherCause, { strict: true })[0]?.path).toBe('$.details.causes[1].message');
    const otherName = { ...invalid, details: { ...invalid.details, name: 'Other' } };
    expect(compareShape(invalid, otherName, { strict: true })[0]?.path).toBe('$.details.name');

    const g = loadGolden('cm-create-unknown-field-warn');
    const ok = asObserved(g);
    const otherWarning = {
      ...ok,
      headers: { ...ok.headers, warning: ['299 - "unknown field \\"other\\""'] },
    };
    expect(compareExchange(g, otherWarning, battery.get(g.step))).toEqual([]);
    expect(compareExchange(g, otherWarning, battery.get(g.step), { strict: true })[0]?.path).toBe(
      'header Warning',
    );
  });

  it('strict message masking keeps byte offsets and HTTP codes, masks resource versions', () => {
    expect(maskMessageStrict('illegal base64 data at input byte 4')).not.toBe(
      maskMessageStrict('illegal base64 data at input byte 5'),
    );
    expect(maskMessageStrict('415: Unsupported Media Type')).toBe('415: Unsupported Media Type');
    expect(maskMessageStrict('too old resource version: 1234 (5678)')).toBe(
      maskMessageStrict('too old resource version: 9876 (9999)'),
    );
  });
});
