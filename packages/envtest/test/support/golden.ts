/**
 * Loading the request battery and the golden exchanges recorded from kube-apiserver v1.32
 * (`test/golden/1.32/` in this package), and comparing an observed exchange with a golden one.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { type CompareOptions, compareShape, type ShapeDiff } from './shape.js';

const here = dirname(fileURLToPath(import.meta.url));
/** Repository root (packages/envtest/test/support → four levels up). */
export const REPO_ROOT = resolve(here, '../../../..');
/**
 * The recorded wire data: `test/golden/1.32/` of this package (battery.json and golden/, see its README), or
 * `KUBELOOP_WIRE_DIR` when set (e.g. a fresh recording against another server version).
 */
export const WIRE_DIR = process.env.KUBELOOP_WIRE_DIR
  ? resolve(process.env.KUBELOOP_WIRE_DIR)
  : resolve(here, '../golden/1.32');
/**
 * Why the golden data cannot be read, or undefined when it can. The data is part of the repository, so the golden
 * tests never skip: a missing folder fails them with this message.
 */
export const WIRE_MISSING: string | undefined = existsSync(join(WIRE_DIR, 'battery.json'))
  ? undefined
  : `no golden wire data at ${WIRE_DIR} (packages/envtest/test/golden/1.32, or KUBELOOP_WIRE_DIR when set)`;
/** A missing ground truth always fails the run rather than skipping (kept for the tests' skip conditions). */
export const WIRE_REQUIRED = true;
export const GOLDEN_DIR = join(WIRE_DIR, 'golden');

/** One step of `battery.json`. */
export interface BatteryStep {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  readonly auth?: 'token' | 'bad' | 'none';
  /** Variables to capture from the JSON response: name → dotted path (`""` = the whole body). */
  readonly capture?: Readonly<Record<string, string>>;
  /** Build the body from a captured object: set dotted paths, delete dotted paths. */
  readonly body_from?: {
    readonly var: string;
    readonly set?: Readonly<Record<string, unknown>>;
    readonly delete?: readonly string[];
  };
  /** Poll until the value at `path` equals `equals` (and the status, if given), for up to `timeout` seconds. */
  readonly retry_until?: {
    readonly path: string;
    readonly equals: unknown;
    readonly status?: number;
    readonly timeout: number;
  };
  /** Not a request: compact the store's history (etcd compaction). */
  readonly compact?: boolean;
  readonly compare?: { readonly text?: 'lastline' };
  readonly body_filter?: 'openapi-keys';
  readonly watch?: {
    readonly max_events: number;
    readonly max_seconds: number;
    readonly delay?: number;
    readonly bookmarks?: 'compare';
    readonly actions?: ReadonlyArray<{
      readonly method: string;
      readonly path: string;
      readonly headers?: Readonly<Record<string, string>>;
      readonly body?: unknown;
    }>;
  };
}

export type BodyType = 'json' | 'text' | 'yaml' | 'empty' | 'watch';

/** A watch event as read off the wire. */
export interface WatchEvent {
  readonly type: string;
  readonly object: unknown;
}

export type EndedBy = 'server' | 'client:max_events' | 'client:max_seconds';

/** A golden file. */
export interface GoldenExchange {
  readonly step: string;
  readonly request: {
    readonly method: string;
    readonly path: string;
    readonly auth?: string;
    readonly body?: unknown;
  };
  readonly response: {
    readonly status: number;
    readonly headers: {
      readonly 'Content-Type': string | null;
      readonly Warning: readonly string[] | null;
      readonly 'Audit-Id': boolean;
      readonly 'Retry-After': string | null;
      readonly 'Transfer-Encoding': string | null;
    };
    readonly body_type: BodyType;
    readonly body: unknown;
  };
  readonly watch?: {
    readonly events: readonly WatchEvent[];
    readonly framing: {
      readonly transfer_encoding: string | null;
      readonly one_json_object_per_line: boolean;
      readonly newline_terminated: boolean;
      readonly ended_by: EndedBy;
    };
  };
}

/** What the replay observed for one step. */
export interface ObservedExchange {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Raw body text (for watches: everything read). */
  readonly text: string;
  readonly watch?: {
    readonly events: readonly WatchEvent[];
    readonly endedBy: EndedBy;
    /** Every non-empty line parsed as one JSON object, and the body ended with a newline. */
    readonly oneObjectPerLine: boolean;
    readonly newlineTerminated: boolean;
  };
}

export function loadBattery(): BatteryStep[] {
  if (WIRE_MISSING) return [];
  return JSON.parse(readFileSync(join(WIRE_DIR, 'battery.json'), 'utf8')) as BatteryStep[];
}

export function goldenNames(): string[] {
  if (!existsSync(GOLDEN_DIR)) return [];
  return readdirSync(GOLDEN_DIR)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

export function loadGolden(name: string): GoldenExchange {
  return JSON.parse(readFileSync(join(GOLDEN_DIR, `${name}.json`), 'utf8')) as GoldenExchange;
}

/** `type/subtype` plus its parameters except `charset`, lower-cased and sorted: the part of a Content-Type compared. */
export function normalizeMediaType(ct: string | null | undefined): string | null {
  if (!ct) return null;
  const [base = '', ...params] = ct.split(';').map((s) => s.trim());
  const kept = params
    .filter((p) => p !== '' && !p.toLowerCase().startsWith('charset='))
    .map((p) => p.toLowerCase())
    .sort();
  return [base.toLowerCase(), ...kept].join(';');
}

function header(h: ObservedExchange['headers'], name: string): string | string[] | undefined {
  const key = Object.keys(h).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : h[key];
}

function lastLine(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return lines[lines.length - 1] ?? '';
}

/** Keeps only `paths.*.serverRelativeURL` of an OpenAPI v3 index, as the golden recording did. */
export function filterOpenApiKeys(body: unknown): unknown {
  if (typeof body !== 'object' || body === null) return body;
  const paths = (body as { paths?: Record<string, { serverRelativeURL?: unknown }> }).paths ?? {};
  const out: Record<string, { serverRelativeURL: unknown }> = {};
  for (const [k, v] of Object.entries(paths)) out[k] = { serverRelativeURL: v?.serverRelativeURL };
  return { paths: out };
}

/** Decodes an observed body the way the golden's `body_type` says. Throws if it does not decode. */
export function decodeBody(type: BodyType, text: string): unknown {
  switch (type) {
    case 'json':
      return JSON.parse(text);
    case 'yaml':
      return parseYaml(text);
    case 'empty':
      return null;
    default:
      return text;
  }
}

/** Comparison tuning for one step, from the harness' table of documented relaxations. */
export interface StepCompare extends CompareOptions {
  /** Skip comparing the Content-Type (a documented deliberate difference). */
  readonly ignoreContentType?: boolean;
}

/**
 * Compares an observed exchange with its golden: status code; Content-Type media type and parameters (charset
 * excepted); presence of `Warning`, `Audit-Id` and `Retry-After`; the body's shape; for watches the sequence of
 * event types (BOOKMARKs dropped unless the step compares them), each event object's shape, the framing and
 * who ended the stream.
 */
export function compareExchange(
  golden: GoldenExchange,
  observed: ObservedExchange,
  step: BatteryStep | undefined,
  tuning: StepCompare = {},
): ShapeDiff[] {
  const diffs: ShapeDiff[] = [];
  const g = golden.response;
  if (g.status !== observed.status) {
    diffs.push({
      path: 'status',
      expected: String(g.status),
      actual: `${observed.status} ${observed.text.slice(0, 300)}`,
    });
    return diffs;
  }
  const gct = normalizeMediaType(g.headers['Content-Type']);
  const oct = normalizeMediaType(header(observed.headers, 'content-type') as string | undefined);
  if (!tuning.ignoreContentType && gct !== oct) {
    diffs.push({ path: 'header Content-Type', expected: String(gct), actual: String(oct) });
  }
  const hasWarning = header(observed.headers, 'warning') !== undefined;
  if (tuning.strict && g.headers.Warning !== null && hasWarning) {
    const raw = header(observed.headers, 'warning');
    const got = (Array.isArray(raw) ? raw : [raw]).join('\n');
    if (got !== g.headers.Warning.join('\n')) {
      diffs.push({ path: 'header Warning', expected: JSON.stringify(g.headers.Warning), actual: got });
    }
  }
  if ((g.headers.Warning !== null) !== hasWarning) {
    diffs.push({
      path: 'header Warning',
      expected: JSON.stringify(g.headers.Warning),
      actual: JSON.stringify(header(observed.headers, 'warning') ?? null),
    });
  }
  if (g.headers['Audit-Id'] !== (header(observed.headers, 'audit-id') !== undefined)) {
    diffs.push({
      path: 'header Audit-Id',
      expected: String(g.headers['Audit-Id']),
      actual: 'presence differs',
    });
  }
  if ((g.headers['Retry-After'] !== null) !== (header(observed.headers, 'retry-after') !== undefined)) {
    diffs.push({
      path: 'header Retry-After',
      expected: String(g.headers['Retry-After']),
      actual: 'presence differs',
    });
  }

  if (g.body_type === 'watch') {
    const gw = golden.watch;
    const ow = observed.watch;
    if (!gw || !ow) {
      diffs.push({
        path: 'watch',
        expected: 'a watch stream',
        actual: ow ? 'watch' : 'no watch stream read',
      });
      return diffs;
    }
    if (gw.framing.transfer_encoding !== null) {
      const te = header(observed.headers, 'transfer-encoding');
      if (te !== gw.framing.transfer_encoding) {
        diffs.push({
          path: 'header Transfer-Encoding',
          expected: String(gw.framing.transfer_encoding),
          actual: String(te),
        });
      }
    }
    if (!ow.oneObjectPerLine)
      diffs.push({ path: 'watch framing', expected: 'one JSON object per line', actual: 'not' });
    if (ow.events.length > 0 && !ow.newlineTerminated) {
      diffs.push({ path: 'watch framing', expected: 'newline-terminated', actual: 'not' });
    }
    const keepBookmarks = step?.watch?.bookmarks === 'compare';
    const ge = gw.events.filter((e) => keepBookmarks || e.type !== 'BOOKMARK');
    const oe = ow.events.filter((e) => keepBookmarks || e.type !== 'BOOKMARK');
    const gTypes = ge.map((e) => e.type).join(',');
    const oTypes = oe.map((e) => e.type).join(',');
    if (gTypes !== oTypes) diffs.push({ path: 'watch event types', expected: gTypes, actual: oTypes });
    const n = Math.min(ge.length, oe.length);
    for (let i = 0; i < n; i++) {
      diffs.push(
        ...compareShape(ge[i], oe[i], tuning).map((d) => ({ ...d, path: `event[${i}]${d.path.slice(1)}` })),
      );
    }
    if (gw.framing.ended_by !== ow.endedBy) {
      diffs.push({ path: 'watch ended_by', expected: gw.framing.ended_by, actual: ow.endedBy });
    }
    return diffs;
  }

  let actual: unknown;
  try {
    actual = decodeBody(g.body_type, observed.text);
  } catch (err) {
    diffs.push({ path: 'body', expected: g.body_type, actual: `undecodable: ${(err as Error).message}` });
    return diffs;
  }
  let expected = g.body;
  if (g.body_type === 'yaml' && typeof expected === 'string') expected = parseYaml(expected);
  if (step?.body_filter === 'openapi-keys') actual = filterOpenApiKeys(actual);
  if (g.body_type === 'text') {
    const e = step?.compare?.text === 'lastline' ? lastLine(String(expected)) : String(expected);
    const a = step?.compare?.text === 'lastline' ? lastLine(String(actual)) : String(actual);
    if (e !== a) diffs.push({ path: 'body', expected: JSON.stringify(e), actual: JSON.stringify(a) });
    return diffs;
  }
  diffs.push(...compareShape(expected, actual, tuning));
  return diffs;
}
