/**
 * @packageDocumentation
 * The controller-runtime walkthrough's PodCounter on the kubeloop stack: the reconciler, the
 * walkthrough's `main` as {@link runPodCounter} (with leader election or sharding, metrics, probes and a ConfigMap
 * report), the counting helpers, and the demo churn used by `--embedded`.
 */
export { type ChurnOptions, startChurn } from './churn.js';
export { countPods, type PodCounts, type PodObject, totalOf } from './counts.js';
export { PodCountGauges } from './metrics.js';
export {
  PodCounter,
  type PodCounterLeaderElection,
  type PodCounterOptions,
  type PodCounterSharding,
  type RunPodCounterOptions,
  runPodCounter,
} from './pod-counter.js';
export { ConfigMapReport, parseReportTarget, REPORT_FIELD_MANAGER, type ReportTarget } from './report.js';
