import {
  type Logger,
  newControllerManagedBy,
  newManager,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
} from '@kubeloop/builder';
import { Pod, type Reader } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';

/** Options of {@link PodCounter}. */
export interface PodCounterOptions {
  /** Count only this namespace. Absent: all namespaces (the walkthrough's behaviour). */
  readonly namespace?: string;
}

/**
 * The controller-runtime walkthrough's `PodCounter`: on every reconcile it lists pods through the
 * manager's client — served from the informer cache — and logs `{"msg":"pod count","count":N}`.
 */
export class PodCounter implements Reconciler {
  constructor(
    readonly client: Reader,
    readonly options: PodCounterOptions = {},
  ) {}

  async reconcile(ctx: ReconcileContext, _req: Request): Promise<Result> {
    const pods = await this.client.list(Pod, {
      signal: ctx.signal,
      ...(this.options.namespace ? { namespace: this.options.namespace } : {}),
    });
    ctx.log.info({ count: pods.items.length }, 'pod count');
    return {};
  }
}

/** Options of {@link runPodCounter}. */
export interface RunPodCounterOptions {
  /** Stops the manager when aborted. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /** Watch and count only this namespace. */
  readonly namespace?: string;
}

/**
 * The walkthrough's `main`, one-to-one:
 * `mgr := ctrl.NewManager(cfg, Options{})`,
 * `ctrl.NewControllerManagedBy(mgr).For(&corev1.Pod{}).Complete(&PodCounter{Client: mgr.GetClient()})`,
 * `mgr.Start(ctx)`. Resolves when `signal` aborts and the manager has stopped.
 */
export async function runPodCounter(config: RestConfig, options: RunPodCounterOptions): Promise<void> {
  const mgr = newManager(config, {
    logger: options.logger,
    ...(options.namespace ? { namespace: options.namespace } : {}),
  });
  newControllerManagedBy(mgr)
    .for(Pod)
    .complete(new PodCounter(mgr.getClient(), options.namespace ? { namespace: options.namespace } : {}));
  await mgr.start(options.signal);
}
