import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ControllerMetricsHook, ReconcileResultLabel } from '../controller-options.js';

/** controller-runtime's reconcile-time buckets, in seconds (5 ms … 60 s). */
export const RECONCILE_TIME_BUCKETS_SECONDS: readonly number[] = Object.freeze([
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
  1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
]);

const RESULTS: readonly ReconcileResultLabel[] = ['success', 'error', 'requeue', 'requeue_after'];

/** The controller metric families of one registry (controller-runtime `internal/controller/metrics`). */
class ControllerMetricFamilies {
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly terminalReconcileErrors: Counter<'controller'>;
  readonly reconcilePanics: Counter<'controller'>;
  readonly reconcileTimeouts: Counter<'controller'>;
  readonly reconcileTime: Histogram<'controller'>;
  readonly maxConcurrentReconciles: Gauge<'controller'>;
  readonly activeWorkers: Gauge<'controller'>;
  readonly reconcileRequeues: Counter<'controller' | 'reason'>;

  constructor(registry: Registry) {
    const registers = [registry];
    const perController = (name: string, help: string) =>
      new Counter({ name, help, labelNames: ['controller'], registers });
    this.reconcileTotal = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileErrors = perController(
      'controller_runtime_reconcile_errors_total',
      'Total number of reconciliation errors per controller',
    );
    this.terminalReconcileErrors = perController(
      'controller_runtime_terminal_reconcile_errors_total',
      'Total number of terminal reconciliation errors per controller',
    );
    this.reconcilePanics = perController(
      'controller_runtime_reconcile_panics_total',
      'Total number of reconciliation panics per controller',
    );
    this.reconcileTimeouts = perController(
      'controller_runtime_reconcile_timeouts_total',
      'Total number of reconciliation timeouts per controller',
    );
    this.reconcileTime = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: [...RECONCILE_TIME_BUCKETS_SECONDS],
      registers,
    });
    const gauge = (name: string, help: string) =>
      new Gauge({ name, help, labelNames: ['controller'], registers });
    this.maxConcurrentReconciles = gauge(
      'controller_runtime_max_concurrent_reconciles',
      'Maximum number of concurrent reconciles per controller',
    );
    this.activeWorkers = gauge(
      'controller_runtime_active_workers',
      'Number of currently used workers per controller',
    );
    this.reconcileRequeues = new Counter({
      name: 'kubeloop_reconcile_requeues_total',
      help: 'Reconciles requeued with backoff for a reason other than an error, per controller and reason (conflict: a 409)',
      labelNames: ['controller', 'reason'],
      registers,
    });
  }
}

const families = new WeakMap<Registry, ControllerMetricFamilies>();

function familiesFor(registry: Registry): ControllerMetricFamilies {
  let f = families.get(registry);
  if (!f) {
    f = new ControllerMetricFamilies(registry);
    families.set(registry, f);
  }
  return f;
}

/**
 * The metrics of one controller, every series already present with 0 (controller-runtime's `initMetrics`):
 * what a controller reports as it reconciles. Durations in **seconds**.
 */
export interface ControllerMetrics {
  /** One reconcile ended with this result (`controller_runtime_reconcile_total`). */
  reconciled(result: ReconcileResultLabel): void;
  /** A reconcile failed (`reconcile_errors_total`; also call `reconciled('error')`). */
  reconcileError(): void;
  /** A reconcile failed with a terminal error (`terminal_reconcile_errors_total`). */
  terminalError(): void;
  /** A reconcile threw where controller-runtime would see a panic (`reconcile_panics_total`). */
  panic(): void;
  /** A reconcile ran past its `reconciliationTimeoutMs` (`reconcile_timeouts_total`). */
  timeout(): void;
  /** Time from the reconcile's start (after dequeue) to its end, in seconds. */
  observeReconcileTime(seconds: number): void;
  /** A worker took (+1) or finished (−1) an item (`controller_runtime_active_workers`). */
  activeWorkers(delta: 1 | -1): void;
  /** A reconcile was requeued for `reason` (`kubeloop_reconcile_requeues_total{reason}`), e.g. a 409 Conflict. */
  requeued(reason: 'conflict'): void;
}

/**
 * The {@link ControllerMetrics} of controller `name` on `registry`; creates the metric families on first
 * use per registry and sets every series of the controller to 0, with `max_concurrent_reconciles` set to
 * `maxConcurrentReconciles`. Calling it again for the same name resets nothing but the gauge.
 */
export function controllerMetrics(
  registry: Registry,
  name: string,
  options: { readonly maxConcurrentReconciles: number },
): ControllerMetrics {
  const f = familiesFor(registry);
  const c = { controller: name };
  for (const result of RESULTS) f.reconcileTotal.inc({ controller: name, result }, 0);
  f.reconcileErrors.inc(c, 0);
  f.terminalReconcileErrors.inc(c, 0);
  f.reconcilePanics.inc(c, 0);
  f.reconcileTimeouts.inc(c, 0);
  f.reconcileTime.zero(c);
  f.maxConcurrentReconciles.set(c, options.maxConcurrentReconciles);
  f.activeWorkers.set(c, 0);
  f.reconcileRequeues.inc({ controller: name, reason: 'conflict' }, 0);
  return {
    reconciled: (result) => f.reconcileTotal.inc({ controller: name, result }),
    reconcileError: () => f.reconcileErrors.inc(c),
    terminalError: () => f.terminalReconcileErrors.inc(c),
    panic: () => f.reconcilePanics.inc(c),
    timeout: () => f.reconcileTimeouts.inc(c),
    observeReconcileTime: (seconds) => f.reconcileTime.observe(c, seconds),
    activeWorkers: (delta) => f.activeWorkers.inc(c, delta),
    requeued: (reason) => f.reconcileRequeues.inc({ controller: name, reason }),
  };
}

/**
 * The Prometheus implementation of a controller's metrics hook on `registry`: pass it as the controller
 * option `metrics` (the manager does). An `error` result also counts in `reconcile_errors_total`, and in
 * `terminal_reconcile_errors_total` / `reconcile_panics_total` when terminal / a panic, as
 * controller-runtime's `reconcileHandler` does; a reconcile whose own deadline fired counts in
 * `reconcile_timeouts_total`; every reconcile's time is observed.
 */
export function controllerMetricsHook(registry: Registry): ControllerMetricsHook {
  const byName = new Map<string, ControllerMetrics>();
  const of = (name: string) => {
    let m = byName.get(name);
    if (!m) {
      m = controllerMetrics(registry, name, { maxConcurrentReconciles: 1 });
      byName.set(name, m);
    }
    return m;
  };
  return {
    init: (name, max) => {
      byName.set(name, controllerMetrics(registry, name, { maxConcurrentReconciles: max }));
    },
    activeWorkers: (name, delta) => of(name).activeWorkers(delta),
    reconciled: (name, o) => {
      const m = of(name);
      m.reconciled(o.result);
      if (o.result === 'error') m.reconcileError();
      if (o.terminal) m.terminalError();
      if (o.panic) m.panic();
      if (o.timedOut) m.timeout();
      if (o.requeueReason) m.requeued(o.requeueReason);
      m.observeReconcileTime(o.seconds);
    },
  };
}
