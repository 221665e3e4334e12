/** `FakeRecorder`: an `EventRecorder` that keeps the Events a reconcile records, for tests to read back. */
import type { EventRecorder, EventType, ObjectReference } from '@kubeloop/builder';
import type { KubeObject } from '@kubeloop/client';

/** One Event recorded through {@link FakeRecorder} (the arguments of `EventRecorder.event`). */
export interface RecordedEvent {
  readonly regarding: KubeObject | ObjectReference;
  readonly type: EventType;
  readonly reason: string;
  readonly action: string;
  readonly note: string;
  readonly related?: KubeObject | ObjectReference;
}

/**
 * An `EventRecorder` that keeps Events in memory, in order (controller-runtime `record.FakeRecorder`): nothing
 * is written to the API server.
 */
export class FakeRecorder implements EventRecorder {
  readonly events: RecordedEvent[] = [];

  event(
    regarding: KubeObject | ObjectReference,
    type: EventType,
    reason: string,
    action: string,
    note: string,
    related?: KubeObject | ObjectReference,
  ): void {
    this.events.push({
      regarding,
      type,
      reason,
      action,
      note,
      ...(related !== undefined ? { related } : {}),
    });
  }
}
