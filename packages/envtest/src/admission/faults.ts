/**
 * Faults of the webhooks envtest calls, so tests can see their `failurePolicy` at work: a webhook (by its
 * name in the configuration) can be made slow, failing (an HTTP error status) or refusing (a connection error
 * without reaching it).
 */

/** One webhook fault. */
export type WebhookFault =
  /** Wait `delayMs` before calling (the webhook's `timeoutSeconds` still applies to the whole call). */
  | { readonly type: 'slow'; readonly delayMs: number }
  /** Answer the call with HTTP `status` (default 500) instead of calling. */
  | { readonly type: 'failing'; readonly status?: number }
  /** Fail the call as a refused connection, without calling. */
  | { readonly type: 'refusing' };

/** Reads the fault of a webhook; set by {@link WebhookFaults}' static block (only the caller of webhooks reads it). */
let faultOf: (faults: WebhookFaults, webhook: string) => WebhookFault | undefined;

/** The fault injected into calls of the webhook named `webhook`, if any. Not exported from the package. */
export function webhookFaultOf(faults: WebhookFaults, webhook: string): WebhookFault | undefined {
  return faultOf(faults, webhook);
}

/** The webhook faults of one envtest server (`server.admission.faults`). */
export class WebhookFaults {
  readonly #byName = new Map<string, WebhookFault>();

  /** Injects `fault` into every call of the webhook named `webhook` until {@link WebhookFaults.clear}. */
  inject(webhook: string, fault: WebhookFault): void {
    this.#byName.set(webhook, fault);
  }

  /** Removes the fault of one webhook, or all of them. */
  clear(webhook?: string): void {
    if (webhook === undefined) this.#byName.clear();
    else this.#byName.delete(webhook);
  }

  static {
    faultOf = (faults, webhook) => faults.#byName.get(webhook);
  }
}
