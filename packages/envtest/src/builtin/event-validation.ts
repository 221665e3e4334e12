/**
 * events.k8s.io/v1 Event validation as kube-apiserver does it (pkg/apis/core/validation/events.go
 * `ValidateEventCreate`/`ValidateEventUpdate` for a request of that group): the legacy checks every Event passes,
 * then the strict ones of the new API. The checks run on the stored (core) shape, so field paths are the internal
 * type's names, as upstream reports them (`message`, `firstTimestamp`, `count`, `source`, `reportingController`).
 */
import { Buffer } from 'node:buffer';
import { type FieldError, fieldInvalid, fieldRequired } from '../errors.js';
import { validateQualifiedName } from '../label-selector.js';
import type { KObject } from '../resource-type.js';
import { obj } from './common.js';

const LIMIT_128 = 128;
const NOTE_LIMIT = 1024;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const isZeroTime = (v: unknown): boolean => v === undefined || v === null || v === '';

/** `series.count` ≥ 2 and `series.lastObservedTime` set, when a series is given. */
function validateSeries(e: KObject): FieldError[] {
  const series = e.series;
  if (series === undefined || series === null) return [];
  const s = obj(series);
  const errs: FieldError[] = [];
  if (typeof s.count !== 'number' || s.count < 2)
    errs.push(fieldInvalid('series.count', '', 'should be at least 2'));
  if (isZeroTime(s.lastObservedTime)) errs.push(fieldRequired('series.lastObservedTime'));
  return errs;
}

/** The checks every Event with an `eventTime` passes (upstream `legacyValidateEvent`, new-style branch). */
function legacyErrors(e: KObject): FieldError[] {
  const errs: FieldError[] = [];
  const ns = str(obj(e.metadata).namespace);
  const involvedNs = str(obj(e.involvedObject).namespace);
  // Go's len() of a string counts UTF-8 bytes, not characters.
  const tooLong = (field: string, v: string, max: number) => {
    if (Buffer.byteLength(v, 'utf8') > max)
      errs.push(fieldInvalid(field, '', `can have at most ${max} characters`));
  };
  if (isZeroTime(e.eventTime)) {
    if (involvedNs === '' ? ns !== '' && ns !== 'default' : ns !== involvedNs)
      errs.push(fieldInvalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
    return errs;
  }
  if (involvedNs === '' && ns !== 'default' && ns !== 'kube-system')
    errs.push(fieldInvalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
  const controller = str(e.reportingComponent);
  if (controller === '') errs.push(fieldRequired('reportingController'));
  for (const msg of validateQualifiedName(controller))
    errs.push(fieldInvalid('reportingController', controller, msg));
  const instance = str(e.reportingInstance);
  if (instance === '') errs.push(fieldRequired('reportingInstance'));
  tooLong('reportingInstance', instance, LIMIT_128);
  const action = str(e.action);
  if (action === '') errs.push(fieldRequired('action'));
  tooLong('action', action, LIMIT_128);
  const reason = str(e.reason);
  if (reason === '') errs.push(fieldRequired('reason'));
  tooLong('reason', reason, LIMIT_128);
  tooLong('message', str(e.message), NOTE_LIMIT);
  return errs;
}

/** Create through events.k8s.io/v1: legacy checks, series, `eventTime`, `type`, and no deprecated fields. */
function createErrors(e: KObject): FieldError[] {
  const errs = [...legacyErrors(e), ...validateSeries(e)];
  if (isZeroTime(e.eventTime)) errs.push(fieldRequired('eventTime'));
  if (e.type !== 'Normal' && e.type !== 'Warning')
    errs.push(fieldInvalid('type', '', `has invalid value: ${str(e.type)}`));
  if (!isZeroTime(e.firstTimestamp)) errs.push(fieldInvalid('firstTimestamp', '', 'needs to be unset'));
  if (!isZeroTime(e.lastTimestamp)) errs.push(fieldInvalid('lastTimestamp', '', 'needs to be unset'));
  if (typeof e.count === 'number' && e.count !== 0) errs.push(fieldInvalid('count', '', 'needs to be unset'));
  const source = obj(e.source);
  if (str(source.component) !== '' || str(source.host) !== '')
    errs.push(fieldInvalid('source', '', 'needs to be unset'));
  return errs;
}

const IMMUTABLE = [
  'involvedObject',
  'reason',
  'message',
  'source',
  'firstTimestamp',
  'lastTimestamp',
  'count',
  'type',
  'action',
  'related',
  'reportingComponent',
  'reportingInstance',
] as const;

/** Update through events.k8s.io/v1: legacy checks, a changed series re-validated, the rest immutable. */
function updateErrors(e: KObject, old: KObject): FieldError[] {
  const errs = legacyErrors(e);
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  if (!same(e.series, old.series)) for (const err of validateSeries(e)) errs.push(err);
  for (const k of IMMUTABLE) {
    if (!same(e[k], old[k])) {
      const path = k === 'reportingComponent' ? 'reportingController' : k;
      errs.push(fieldInvalid(path, e[k] ?? '', 'field is immutable'));
    }
  }
  const micros = (v: unknown) => (isZeroTime(v) ? 0 : Math.floor(Date.parse(String(v)) * 1000));
  if (micros(e.eventTime) !== micros(old.eventTime))
    errs.push(fieldInvalid('eventTime', e.eventTime, 'field is immutable'));
  return errs;
}

/**
 * Validate an events.k8s.io/v1 Event given in its stored (core/v1) shape; `old` likewise on update.
 * @returns the field errors in upstream order (empty when valid).
 */
export function validateEventsV1(storageShape: KObject, old: KObject | undefined): FieldError[] {
  return old ? updateErrors(storageShape, old) : createErrors(storageShape);
}
