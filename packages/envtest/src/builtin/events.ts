/** Events: core/v1 and events.k8s.io/v1, stored once as core Events and converted between the two shapes. */
import { getPath, type KObject, type ResourceType } from '../resource-type.js';
import { ageString } from '../table.js';
import { base, col, obj, setDefault, str } from './common.js';
import { validateEventsV1 } from './event-validation.js';

const eventFieldSelectors: Record<string, (o: KObject) => string> = {
  'involvedObject.kind': (o) => String(getPath(o, 'involvedObject.kind') ?? ''),
  'involvedObject.namespace': (o) => String(getPath(o, 'involvedObject.namespace') ?? ''),
  'involvedObject.name': (o) => String(getPath(o, 'involvedObject.name') ?? ''),
  'involvedObject.uid': (o) => String(getPath(o, 'involvedObject.uid') ?? ''),
  'involvedObject.apiVersion': (o) => String(getPath(o, 'involvedObject.apiVersion') ?? ''),
  'involvedObject.resourceVersion': (o) => String(getPath(o, 'involvedObject.resourceVersion') ?? ''),
  'involvedObject.fieldPath': (o) => String(getPath(o, 'involvedObject.fieldPath') ?? ''),
  reason: (o) => String(o.reason ?? ''),
  reportingComponent: (o) => String(o.reportingComponent ?? ''),
  source: (o) => String(getPath(o, 'source.component') ?? o.reportingComponent ?? ''),
  type: (o) => String(o.type ?? ''),
};

/** What core/v1 and events.k8s.io/v1 Events share: one stored resource, served in two shapes. */
const EVENT_RESOURCE = {
  resource: 'events',
  kind: 'Event',
  singular: 'event',
  namespaced: true,
  shortNames: ['ev'],
  allowCreateOnUpdate: true,
  storageVersionHash: 'r2yiGXH7wu8=',
  storageKey: 'events',
  fieldSelectors: eventFieldSelectors,
} as const;

export const CORE_EVENTS: ResourceType = base({
  group: '',
  version: 'v1',
  ...EVENT_RESOURCE,
  defaults(o) {
    setDefault(o, 'involvedObject', {});
    setDefault(o, 'source', {});
    setDefault(o, 'firstTimestamp', null);
    setDefault(o, 'lastTimestamp', null);
    setDefault(o, 'reportingComponent', '');
    setDefault(o, 'reportingInstance', '');
  },
  tableColumns: [
    col('Last Seen', 'string', 'Time when last event was observed', (o, now) =>
      ageString(o.lastTimestamp ?? o.eventTime ?? getPath(o, 'metadata.creationTimestamp'), now),
    ),
    col('Type', 'string', 'Type of this event', (o) => str(o.type)),
    col('Reason', 'string', 'Reason why this event was generated', (o) => str(o.reason)),
    col(
      'Object',
      'string',
      'The object this event is about',
      (o) =>
        `${String(getPath(o, 'involvedObject.kind') ?? '').toLowerCase()}/${getPath(o, 'involvedObject.name') ?? ''}`,
    ),
    col('Message', 'string', 'A human-readable description of the status of this operation', (o) =>
      str(o.message, ''),
    ),
  ],
});

/** core/v1 Event (storage shape) → events.k8s.io/v1 Event. */
function eventToV1(o: KObject): KObject {
  const out: KObject = { kind: 'Event', apiVersion: 'events.k8s.io/v1', metadata: o.metadata };
  const set = (k: string, v: unknown) => {
    if (v !== undefined && v !== null && v !== '') out[k] = v;
  };
  out.eventTime = o.eventTime ?? null;
  set('series', o.series);
  set('reportingController', o.reportingComponent);
  set('reportingInstance', o.reportingInstance);
  set('action', o.action);
  set('reason', o.reason);
  set('regarding', o.involvedObject);
  set('related', o.related);
  set('note', o.message);
  set('type', o.type);
  out.deprecatedSource = obj(o.source);
  out.deprecatedFirstTimestamp = o.firstTimestamp ?? null;
  out.deprecatedLastTimestamp = o.lastTimestamp ?? null;
  if (o.count) out.deprecatedCount = o.count;
  return out;
}

/** events.k8s.io/v1 Event → core/v1 Event (storage shape). */
function eventFromV1(o: KObject): KObject {
  const out: KObject = { kind: 'Event', apiVersion: 'v1', metadata: o.metadata };
  out.involvedObject = o.regarding ?? {};
  if (o.reason !== undefined) out.reason = o.reason;
  if (o.note !== undefined) out.message = o.note;
  out.source = o.deprecatedSource ?? {};
  out.firstTimestamp = o.deprecatedFirstTimestamp ?? null;
  out.lastTimestamp = o.deprecatedLastTimestamp ?? null;
  if (o.deprecatedCount !== undefined) out.count = o.deprecatedCount;
  if (o.type !== undefined) out.type = o.type;
  out.eventTime = o.eventTime ?? null;
  if (o.series !== undefined) out.series = o.series;
  if (o.action !== undefined) out.action = o.action;
  if (o.related !== undefined) out.related = o.related;
  out.reportingComponent = o.reportingController ?? '';
  out.reportingInstance = o.reportingInstance ?? '';
  return out;
}

export const EVENTS_V1: ResourceType = base({
  group: 'events.k8s.io',
  version: 'v1',
  ...EVENT_RESOURCE,
  fromStorage: eventToV1,
  toStorage: eventFromV1,
  validate(o, old) {
    return validateEventsV1(
      eventFromV1(structuredClone(o)),
      old ? eventFromV1(structuredClone(old)) : undefined,
    );
  },
});
