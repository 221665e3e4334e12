export {
  EventBroadcaster,
  type EventBroadcasterOptions,
  type EventBroadcasterStats,
  type EventRecorder,
  type EventType,
  type EventV1,
  EventV1Kind,
  type ObjectReference,
} from './recorder.js';
