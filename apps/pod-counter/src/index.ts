/**
 * @packageDocumentation
 * The controller-runtime walkthrough's PodCounter on the kubeloop stack: the reconciler, the
 * walkthrough's `main` as {@link runPodCounter}, and the demo churn used by `--embedded`.
 */
export { type ChurnOptions, startChurn } from './churn.js';
export {
  PodCounter,
  type PodCounterOptions,
  type RunPodCounterOptions,
  runPodCounter,
} from './pod-counter.js';
