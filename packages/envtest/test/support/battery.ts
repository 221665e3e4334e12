/**
 * Replays the request battery (`test/golden/1.32/battery.json`) against an API server, in order, with the
 * battery's captures, substitutions, `body_from` edits, `retry_until` polling, compaction and watch steps.
 */
import { type Dispatcher, request } from 'undici';
import type { BatteryStep, EndedBy, ObservedExchange, WatchEvent } from './golden.js';
import { waitFor } from './wait.js';

/** The server a battery runs against. */
export interface WireTarget {
  /** Base URL, e.g. `https://127.0.0.1:41234`. */
  readonly baseUrl: string;
  /** Bearer token sent for `auth: token` steps (the default). */
  readonly token?: string;
  /** Dispatcher trusting the server's CA. */
  readonly dispatcher: Dispatcher;
  /** Compacts the server's history the way etcd compaction does (older RVs give 410). */
  compact(): Promise<void>;
}

/** The result of one step: what was observed, or why the step could not run. */
export type StepResult =
  | { readonly ok: true; readonly observed: ObservedExchange }
  | { readonly ok: false; readonly error: string };

const BAD_TOKEN = 'not-the-right-token';
/** The recording client's User-Agent: managedFields managers of writes without `fieldManager` derive from it. */
const USER_AGENT = 'kubeloop-wire/1.0';

/** Reads a value at a dotted path with `[key=value]` filters, e.g. `status.conditions[type=Established].status`. */
export function getPath(obj: unknown, path: string): unknown {
  if (path === '') return obj;
  let cur: unknown = obj;
  for (const seg of splitPath(path)) {
    const m = /^([^[]*)(?:\[([^=\]]+)=([^\]]*)\])?$/.exec(seg);
    if (!m) return undefined;
    const [, key = '', fk, fv] = m;
    if (key !== '') {
      if (typeof cur !== 'object' || cur === null) return undefined;
      cur = (cur as Record<string, unknown>)[key];
    }
    if (fk !== undefined) {
      if (!Array.isArray(cur)) return undefined;
      cur = cur.find((el) => getPath(el, fk) === fv);
    }
  }
  return cur;
}

function splitPath(path: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of path) {
    if (ch === '[') depth++;
    if (ch === ']') depth--;
    if (ch === '.' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const segs = path.split('.');
  let cur = obj;
  for (const seg of segs.slice(0, -1)) {
    const next = cur[seg];
    if (typeof next !== 'object' || next === null) cur[seg] = {};
    cur = cur[seg] as Record<string, unknown>;
  }
  cur[segs[segs.length - 1] as string] = value;
}

function deletePath(obj: Record<string, unknown>, path: string): void {
  const segs = path.split('.');
  let cur: unknown = obj;
  for (const seg of segs.slice(0, -1)) {
    if (typeof cur !== 'object' || cur === null) return;
    cur = (cur as Record<string, unknown>)[seg];
  }
  if (typeof cur === 'object' && cur !== null)
    delete (cur as Record<string, unknown>)[segs[segs.length - 1] as string];
}

/** Substitutes `{{var}}` and `{{var|url}}` in a path. Throws on an unknown variable. */
export function substitute(path: string, vars: ReadonlyMap<string, unknown>): string {
  return path.replace(/\{\{(\w+)(\|url)?\}\}/g, (_, name: string, url: string | undefined) => {
    if (!vars.has(name)) throw new Error(`battery variable {{${name}}} was never captured`);
    const v = String(vars.get(name));
    return url ? encodeURIComponent(v) : v;
  });
}

function requestBody(
  step: { body?: unknown },
  bodyFrom: BatteryStep['body_from'],
  vars: ReadonlyMap<string, unknown>,
) {
  if (bodyFrom) {
    if (!vars.has(bodyFrom.var)) throw new Error(`body_from variable ${bodyFrom.var} was never captured`);
    const obj = structuredClone(vars.get(bodyFrom.var)) as Record<string, unknown>;
    for (const [p, v] of Object.entries(bodyFrom.set ?? {})) setPath(obj, p, structuredClone(v));
    for (const p of bodyFrom.delete ?? []) deletePath(obj, p);
    return JSON.stringify(obj);
  }
  if (step.body === undefined) return undefined;
  return typeof step.body === 'string' ? step.body : JSON.stringify(step.body);
}

function authHeaders(target: WireTarget, auth: BatteryStep['auth']): Record<string, string> {
  if (auth === 'none') return {};
  if (auth === 'bad') return { authorization: `Bearer ${BAD_TOKEN}` };
  return target.token ? { authorization: `Bearer ${target.token}` } : {};
}

async function plainRequest(
  target: WireTarget,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<ObservedExchange> {
  const res = await request(new URL(path, target.baseUrl), {
    method: method as Dispatcher.HttpMethod,
    headers: { 'user-agent': USER_AGENT, ...headers },
    body,
    dispatcher: target.dispatcher,
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

async function watchRequest(
  target: WireTarget,
  step: BatteryStep,
  path: string,
  headers: Record<string, string>,
): Promise<ObservedExchange> {
  const w = step.watch;
  if (!w) throw new Error('not a watch step');
  const controller = new AbortController();
  const deadline = Date.now() + w.max_seconds * 1000;
  const res = await request(new URL(path, target.baseUrl), {
    method: 'GET',
    headers: { 'user-agent': USER_AGENT, ...headers },
    dispatcher: target.dispatcher,
    signal: controller.signal,
  });
  if (res.statusCode !== 200) {
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  }
  // Actions run on other connections once the watch is established (headers received).
  const actionsDone = (async () => {
    for (const a of w.actions ?? []) {
      const r = await plainRequest(
        target,
        a.method,
        a.path,
        { accept: 'application/json', ...lower(a.headers ?? {}), ...authHeaders(target, 'token') },
        a.body === undefined ? undefined : typeof a.body === 'string' ? a.body : JSON.stringify(a.body),
      );
      if (r.status >= 300)
        throw new Error(`watch action ${a.method} ${a.path} → ${r.status}: ${r.text.slice(0, 200)}`);
    }
  })();

  const events: WatchEvent[] = [];
  let text = '';
  let pending = '';
  let oneObjectPerLine = true;
  let counted = 0;
  const state: { endedBy: EndedBy } = { endedBy: 'server' };
  const timer = setTimeout(
    () => {
      state.endedBy = 'client:max_seconds';
      controller.abort();
    },
    Math.max(0, deadline - Date.now()),
  );
  try {
    for await (const chunk of res.body) {
      const s = (chunk as Buffer).toString('utf8');
      text += s;
      pending += s;
      let nl = pending.indexOf('\n');
      while (nl >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        nl = pending.indexOf('\n');
        try {
          const ev = JSON.parse(line) as WatchEvent;
          if (typeof ev !== 'object' || ev === null) oneObjectPerLine = false;
          events.push(ev);
          if (ev.type !== 'BOOKMARK') counted++;
        } catch {
          oneObjectPerLine = false;
        }
        if (counted >= w.max_events) {
          state.endedBy = 'client:max_events';
          break;
        }
      }
      if (state.endedBy === 'client:max_events') break;
    }
  } catch (err) {
    if (state.endedBy !== 'client:max_seconds') throw err;
  } finally {
    clearTimeout(timer);
    if (state.endedBy !== 'server') controller.abort();
  }
  await actionsDone;
  if (pending.trim() !== '' && state.endedBy === 'server') oneObjectPerLine = false;
  return {
    status: res.statusCode,
    headers: res.headers,
    text,
    watch: {
      events,
      endedBy: state.endedBy,
      oneObjectPerLine,
      newlineTerminated: state.endedBy !== 'server' || pending === '',
    },
  };
}

function lower(h: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}

/**
 * Runs every step of the battery in order against `target`, returning each step's observation by name.
 * A failing step is recorded (not thrown) so that later, independent steps still run.
 */
export async function runBattery(
  target: WireTarget,
  steps: readonly BatteryStep[],
): Promise<Map<string, StepResult>> {
  const vars = new Map<string, unknown>();
  const results = new Map<string, StepResult>();
  for (const step of steps) {
    try {
      if (step.compact) {
        await target.compact();
        continue;
      }
      const path = substitute(step.path, vars);
      const headers = { ...lower(step.headers ?? {}), ...authHeaders(target, step.auth) };
      let observed: ObservedExchange;
      if (step.watch) {
        observed = await watchRequest(target, step, path, headers);
      } else {
        const body = requestBody(step, step.body_from, vars);
        const once = () => plainRequest(target, step.method, path, headers, body);
        observed = await once();
        const until = step.retry_until;
        if (until) {
          const ok = (o: ObservedExchange) => {
            if (until.status !== undefined && o.status !== until.status) return false;
            try {
              return getPath(JSON.parse(o.text), until.path) === until.equals;
            } catch {
              return false;
            }
          };
          if (!ok(observed)) {
            observed = await waitFor(
              async () => {
                const o = await once();
                return ok(o) ? o : undefined;
              },
              until.timeout * 1000,
              `${step.name}: ${until.path} == ${String(until.equals)}`,
            );
          }
        }
      }
      if (step.capture) {
        const json = JSON.parse(observed.text) as unknown;
        for (const [name, p] of Object.entries(step.capture)) vars.set(name, getPath(json, p));
      }
      results.set(step.name, { ok: true, observed });
    } catch (err) {
      results.set(step.name, { ok: false, error: (err as Error).stack ?? String(err) });
    }
  }
  return results;
}
