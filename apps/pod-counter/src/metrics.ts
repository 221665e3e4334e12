import { Gauge, type Registry } from 'prom-client';
import type { PodCounts } from './counts.js';

/**
 * `pod_counter_pods{namespace,phase}`: the pods the last reconcile counted. A namespace or phase that no
 * longer has pods disappears from the scrape (the gauge is rebuilt from each count).
 */
export class PodCountGauges {
  readonly #gauge: Gauge<'namespace' | 'phase'>;

  /** Registers the gauge on `registry` (the manager's metrics registry, served on `/metrics`). */
  constructor(registry: Registry) {
    this.#gauge = new Gauge({
      name: 'pod_counter_pods',
      help: 'Pods counted by pod-counter at its last reconcile, by namespace and phase.',
      labelNames: ['namespace', 'phase'],
      registers: [registry],
    });
  }

  /** Replaces every series with `counts`. */
  set(counts: PodCounts): void {
    this.#gauge.reset();
    for (const [namespace, byPhase] of Object.entries(counts)) {
      for (const [phase, n] of Object.entries(byPhase)) this.#gauge.set({ namespace, phase }, n);
    }
  }
}
