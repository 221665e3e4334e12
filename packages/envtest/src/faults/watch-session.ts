/**
 * One watch's delivery pipeline under fault rules: an ordered queue of writes and waits in front of the
 * response, fed frame by frame. It applies one `endWatch`, one `shapeWatch` script, one
 * `suppressInitialEventsEnd` and every matching `delayEvents` rule.
 */
import { FaultError } from './errors.js';
import type { Rule } from './rule.js';
import type { WatchFaults, WatchWriter } from './seam.js';
import type {
  DelayEventsSpec,
  EndWatchesSpec,
  FaultSpec,
  ShapeWatchSpec,
  SuppressInitialEventsEndSpec,
} from './spec.js';
import { pickStatus, statusFor } from './status.js';

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';
const DEFAULT_DELAYED = ['ADDED', 'MODIFIED', 'DELETED'];

type Op =
  | { k: 'write'; data: string | Uint8Array }
  /** Wait until `at` (ms since the epoch); a negative `at` is a relative wait resolved at the queue head. */
  | { k: 'until'; at: number }
  | { k: 'end' }
  | { k: 'destroy' };

/** The rules that apply to one watch. */
export interface WatchPlan {
  end?: Rule<EndWatchesSpec>;
  shape?: Rule<ShapeWatchSpec>;
  delays: Array<Rule<DelayEventsSpec>>;
  suppressEnd?: Rule<SuppressInitialEventsEndSpec>;
}

/** The plan for a watch from the live rules, in order; `take()` counts the watch against each rule. */
export function planWatch(rules: Iterable<Rule<FaultSpec>>, streamingList: boolean): WatchPlan {
  const plan: WatchPlan = { delays: [] };
  for (const rule of rules) {
    const spec = rule.spec;
    switch (spec.type) {
      case 'endWatch':
        if (plan.end === undefined && rule.take()) plan.end = rule as Rule<typeof spec>;
        break;
      case 'shapeWatch':
        if (plan.shape === undefined && rule.take()) plan.shape = rule as Rule<typeof spec>;
        break;
      case 'delayEvents':
        // hits and `times` count delayed events, not watches.
        plan.delays.push(rule as Rule<typeof spec>);
        break;
      case 'suppressInitialEventsEnd':
        if (plan.suppressEnd === undefined && streamingList && rule.take())
          plan.suppressEnd = rule as Rule<typeof spec>;
        break;
      default:
        break;
    }
  }
  return plan;
}

/** Whether a plan changes nothing (then the server writes frames directly). */
export function isEmptyPlan(plan: WatchPlan): boolean {
  return (
    plan.end === undefined &&
    plan.shape === undefined &&
    plan.delays.length === 0 &&
    plan.suppressEnd === undefined
  );
}

interface HeldEvent {
  at: number;
  line: string;
}

/** One watch's delivery pipeline: an ordered queue of writes and waits in front of the writer. */
export class WatchSession implements WatchFaults {
  private readonly ops: Op[] = [];
  private timer: NodeJS.Timeout | undefined;
  private endTimer: NodeJS.Timeout | undefined;
  private finished = false; // end/destroy queued or done: no more input accepted
  private closed = false; // writer ended/destroyed or server closed the watch
  private frames = 0;
  private stepIndex = 0;
  private stepUsed = 0;
  private mergeBuffer: string[] = [];
  /** order:'object' holds, per namespace/name. */
  private readonly held = new Map<string, HeldEvent[]>();
  private heldTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly writer: WatchWriter,
    private readonly plan: WatchPlan,
  ) {
    const afterMs = plan.end?.spec.afterMs;
    if (afterMs !== undefined) {
      this.endTimer = setTimeout(() => this.finish('end'), afterMs);
    }
    // Steps that consume no frame run at once (after the server's own synchronous start-up).
    queueMicrotask(() => this.runZeroSteps());
  }

  deliver(event: { type: string; object: unknown }, line: string): void {
    if (this.finished || this.closed) return;
    try {
      this.accept(event, line);
    } catch {
      // Never throw into the server's fan-out: a fault that cannot be applied degrades to a plain write.
      if (!this.closed) this.writer.write(line);
    }
  }

  private accept(event: { type: string; object: unknown }, line: string): void {
    if (this.plan.suppressEnd !== undefined && isInitialEventsEnd(event)) {
      return;
    }
    const now = Date.now();
    const objectKey = keyOf(event.object);
    let release: number | undefined;
    let objectOrder = false;
    for (const d of this.plan.delays) {
      if (!objectMatches(d.spec, event) || !d.take()) continue;
      const at = now + d.spec.delayMs;
      release = release === undefined ? at : Math.max(release, at);
      if (d.spec.order === 'object') objectOrder = true;
    }
    if (release !== undefined && objectOrder && objectKey !== undefined) {
      this.holdForObject(objectKey, { at: release, line });
      return;
    }
    if (this.held.size > 0 && event.type === 'BOOKMARK') return; // never let a bookmark overtake a held event
    if (objectKey !== undefined && this.held.has(objectKey)) {
      // Later events about an object with held events wait behind them (per-object order).
      this.holdForObject(objectKey, { at: 0, line });
      return;
    }
    if (release !== undefined) this.push({ k: 'until', at: release });
    this.frame(line);
  }

  close(): void {
    this.closed = true;
    this.ops.length = 0;
    this.held.clear();
    this.mergeBuffer = [];
    if (this.timer) clearTimeout(this.timer);
    if (this.endTimer) clearTimeout(this.endTimer);
    if (this.heldTimer) clearTimeout(this.heldTimer);
  }

  /** One frame (in stream order) through the shaping script and the end-after-N-events counter. */
  private frame(line: string): void {
    this.shapeFrame(line);
    this.frames++;
    const n = this.plan.end?.spec.afterEvents;
    if (n !== undefined && this.frames >= n) this.finish('end');
  }

  private shapeFrame(line: string): void {
    const steps = this.plan.shape?.spec.steps;
    const step = steps?.[this.stepIndex];
    if (step === undefined) {
      this.push({ k: 'write', data: line });
      return;
    }
    switch (step.op) {
      case 'pass':
        this.push({ k: 'write', data: line });
        if (++this.stepUsed >= (step.count ?? 1)) this.nextStep();
        break;
      case 'split': {
        const bytes = Buffer.from(line, 'utf8');
        // A frame without a multi-byte character is cut evenly instead (documented on the step).
        const utf8 = (step.insideUtf8 ?? false) && bytes.some((b) => b >= 0xc0);
        const cuts = splitPoints(bytes, step.parts ?? 3, utf8);
        let from = 0;
        cuts.push(bytes.length);
        cuts.forEach((to, i) => {
          if (i > 0 && (step.delayMs ?? 0) > 0) this.push({ k: 'until', at: -(step.delayMs ?? 0) });
          this.push({ k: 'write', data: bytes.subarray(from, to) });
          from = to;
        });
        this.nextStep();
        break;
      }
      case 'merge':
        this.mergeBuffer.push(line);
        if (this.mergeBuffer.length >= step.count) {
          this.push({ k: 'write', data: this.mergeBuffer.join('') });
          this.mergeBuffer = [];
          this.nextStep();
        }
        break;
      case 'truncate': {
        const bytes = Buffer.from(line, 'utf8');
        const n = Math.min(step.bytes ?? Math.floor(bytes.length / 2), bytes.length - 1);
        this.push({ k: 'write', data: bytes.subarray(0, Math.max(1, n)) });
        this.nextStep();
        this.finish(step.after ?? 'end');
        break;
      }
      case 'noNewline':
        this.push({ k: 'write', data: line.endsWith('\n') ? line.slice(0, -1) : line });
        this.nextStep();
        this.finish('end');
        break;
      default:
        // A zero-frame step is at the head: run it, then shape this frame with what follows.
        this.runZeroSteps();
        if (!this.finished) this.shapeFrame(line);
    }
  }

  private nextStep(): void {
    this.stepIndex++;
    this.stepUsed = 0;
    this.runZeroSteps();
  }

  /** Run the steps at the head of the script that consume no frame. */
  private runZeroSteps(): void {
    const steps = this.plan.shape?.spec.steps;
    if (steps === undefined) return;
    while (!this.finished && !this.closed) {
      const step = steps[this.stepIndex];
      if (step === undefined) return;
      switch (step.op) {
        case 'raw':
          this.push({ k: 'write', data: step.data });
          this.stepIndex++;
          if (step.after === 'end' || step.after === 'destroy') this.finish(step.after);
          break;
        case 'status':
          this.push({
            k: 'write',
            data: `${JSON.stringify(statusFor(step.code ?? 500, pickStatus(step)))}\n`,
          });
          this.stepIndex++;
          if (step.after === 'end') this.finish('end');
          break;
        case 'error': {
          const status = statusFor(step.code ?? 410, pickStatus(step));
          this.push({ k: 'write', data: `${JSON.stringify({ type: 'ERROR', object: status })}\n` });
          this.stepIndex++;
          this.finish('end');
          break;
        }
        case 'delay':
          this.push({ k: 'until', at: -step.ms });
          this.stepIndex++;
          break;
        case 'end':
        case 'destroy':
          this.stepIndex++;
          this.finish(step.op);
          break;
        default:
          return;
      }
    }
  }

  private finish(how: 'end' | 'destroy'): void {
    if (this.finished || this.closed) return;
    this.finished = true;
    if (this.endTimer) clearTimeout(this.endTimer);
    this.push({ k: how });
  }

  private holdForObject(key: string, ev: HeldEvent): void {
    const list = this.held.get(key);
    if (list) list.push(ev);
    else this.held.set(key, [ev]);
    this.scheduleHeld();
  }

  private scheduleHeld(): void {
    if (this.heldTimer) clearTimeout(this.heldTimer);
    this.heldTimer = undefined;
    let next = Number.POSITIVE_INFINITY;
    for (const list of this.held.values()) next = Math.min(next, list[0]?.at ?? next);
    if (next === Number.POSITIVE_INFINITY) return;
    this.heldTimer = setTimeout(() => this.releaseHeld(), Math.max(0, next - Date.now()));
  }

  private releaseHeld(): void {
    if (this.closed || this.finished) return;
    const now = Date.now();
    for (const [key, list] of this.held) {
      while (list.length > 0 && (list[0]?.at ?? 0) <= now) {
        const ev = list.shift()!;
        this.frame(ev.line);
        if (this.finished) return;
      }
      if (list.length === 0) this.held.delete(key);
    }
    this.scheduleHeld();
  }

  private push(op: Op): void {
    this.ops.push(op);
    if (this.timer === undefined) this.pump();
  }

  private pump(): void {
    this.timer = undefined;
    while (!this.closed) {
      const op = this.ops[0];
      if (op === undefined) return;
      if (op.k === 'until') {
        if (op.at < 0) op.at = Date.now() - op.at;
        const wait = op.at - Date.now();
        if (wait > 0) {
          this.timer = setTimeout(() => this.pump(), wait);
          return;
        }
        this.ops.shift();
        continue;
      }
      this.ops.shift();
      try {
        if (op.k === 'write') this.writer.write(op.data);
        else if (op.k === 'end') {
          this.closed = true;
          this.writer.end();
        } else {
          this.closed = true;
          this.writer.destroy();
        }
      } catch {
        this.closed = true;
      }
    }
  }
}

/** Byte offsets at which to cut a frame into `parts` pieces; with `insideUtf8` the first cut splits a character. */
export function splitPoints(bytes: Uint8Array, parts: number, insideUtf8: boolean): number[] {
  const n = bytes.length;
  const cuts: number[] = [];
  if (insideUtf8) {
    const lead = bytes.findIndex((b) => b >= 0xc0);
    if (lead < 0)
      throw new FaultError('EINVALID', 'split insideUtf8: the frame has no multi-byte UTF-8 character');
    cuts.push(lead + 1);
  }
  const want = Math.max(0, Math.min(parts - 1, n - 1));
  for (let i = 1; cuts.length < want && i <= want; i++) {
    const c = Math.floor((n * i) / parts);
    if (c > 0 && c < n && !cuts.includes(c)) cuts.push(c);
  }
  // Fill up if even cuts collided with the UTF-8 cut.
  for (let c = 1; cuts.length < want && c < n; c++) if (!cuts.includes(c)) cuts.push(c);
  return cuts.sort((a, b) => a - b);
}

function keyOf(object: unknown): string | undefined {
  const md = (object as { metadata?: { namespace?: unknown; name?: unknown } } | null)?.metadata;
  if (md === undefined || typeof md.name !== 'string') return undefined;
  return `${typeof md.namespace === 'string' ? md.namespace : ''}/${md.name}`;
}

function objectMatches(spec: DelayEventsSpec, event: { type: string; object: unknown }): boolean {
  if (!(spec.eventTypes ?? DEFAULT_DELAYED).includes(event.type)) return false;
  const md = (event.object as { metadata?: { namespace?: unknown; name?: unknown } } | null)?.metadata;
  const name = md?.name;
  if (typeof name !== 'string') return false;
  if (spec.name !== undefined ? name !== spec.name : !name.startsWith(spec.namePrefix ?? '')) return false;
  return spec.namespace === undefined || spec.namespace === (md?.namespace ?? '');
}

function isInitialEventsEnd(event: { type: string; object: unknown }): boolean {
  if (event.type !== 'BOOKMARK') return false;
  const ann = (event.object as { metadata?: { annotations?: Record<string, unknown> } } | null)?.metadata
    ?.annotations;
  return ann?.[INITIAL_EVENTS_END] === 'true';
}
