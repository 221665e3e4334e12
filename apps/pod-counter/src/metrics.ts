import { Gauge, type Registry } from 'prom-client';
import type { PodCounts } from './counts.js';

/**
 * `pod_counter_pods{namespace,phase}`: the pods the last reconcile counted. A namespace or phase that no
 * longer has pods disappears from the scrape (the gauge is rebuilt from each count).
 */
export class PodCountGauges {
  readonly #gauge: Gauge<'namespace' | 'phase'>;
  /** The phases of each namespace whose series {@link PodCountGauges.setNamespace} set. */
  readonly #series = new Map<string, readonly string[]>();
  /** Which namespaces this replica still owns (sharded counting); unset: all. */
  #keep: ((ns: string) => boolean) | undefined;

  /** Registers the gauge on `registry` (the manager's metrics registry, served on `/metrics`). */
  constructor(registry: Registry) {
    const prune = () => this.#prune();
    this.#gauge = new Gauge({
      name: 'pod_counter_pods',
      help: 'Pods counted by pod-counter at its last reconcile, by namespace and phase.',
      labelNames: ['namespace', 'phase'],
      registers: [registry],
      // At every scrape: a namespace that moved to another shard replica is no longer reported here.
      collect: prune,
    });
  }

  /** Replaces every series with `counts`. */
  set(counts: PodCounts): void {
    this.#gauge.reset();
    for (const [namespace, byPhase] of Object.entries(counts)) {
      for (const [phase, n] of Object.entries(byPhase)) this.#gauge.set({ namespace, phase }, n);
    }
  }

  /**
   * Replaces the series of one namespace with its count (sharded counting: each replica reports the
   * namespaces it owns). From then on, the series of a namespace `keep` refuses (it moved to another
   * replica) are dropped here and at every scrape.
   */
  setNamespace(
    namespace: string,
    byPhase: Readonly<Record<string, number>>,
    keep: (ns: string) => boolean,
  ): void {
    this.#keep = keep;
    this.#drop(namespace);
    this.#prune();
    const phases = Object.keys(byPhase);
    for (const phase of phases) this.#gauge.set({ namespace, phase }, byPhase[phase] ?? 0);
    if (phases.length > 0) this.#series.set(namespace, phases);
  }

  #prune(): void {
    const keep = this.#keep;
    if (!keep) return;
    for (const ns of [...this.#series.keys()]) if (!keep(ns)) this.#drop(ns);
  }

  #drop(namespace: string): void {
    for (const phase of this.#series.get(namespace) ?? []) this.#gauge.remove({ namespace, phase });
    this.#series.delete(namespace);
  }
}
