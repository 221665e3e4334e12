/**
 * @packageDocumentation
 * `@kubeloop/testing`: a chaos harness for controllers built with `@kubeloop/builder`. `runChaos` runs your
 * manager against an in-process envtest API server under random traffic and a seeded schedule of faults
 * (watch drops, black-holed watches, 410 on watch/list/continue, 5xx, 429 with Retry-After, broken frames,
 * delayed events, compaction, a server restart that keeps state and resourceVersions) and reports the
 * figures: lost changes, divergent cache entries, concurrent reconciles of one key, unhandled rejections.
 * `newFakeClient` is the real client served in-process by envtest's registry (no sockets), with
 * interceptors, a call log and envtest's fault rules; `testReconciler` runs one reconcile against it and
 * reports the writes, the requests enqueued, the Events and the Result; `startTestTarget` runs one test file
 * on the fake, envtest or a real cluster. `runChaos({ realControlPlane })` runs the same under the faults of a
 * real kube-apiserver + etcd (`RealControlPlane`: paused, killed, restarted, compacted; `FaultProxy`: reset,
 * dropped, delayed and partitioned connections). `SteadyElection` elects a manager under test on a clock
 * that a process starved of CPU cannot make late.
 */
export {
  type ChaosCluster,
  type MultiClusterChaosEnv,
  type MultiClusterChaosOptions,
  runMultiClusterChaos,
} from './chaos/multicluster.js';
export { type KeyObservations, probeKey, ReconcileProbe } from './chaos/probe.js';
export { type Random, randomSeed, seededRandom } from './chaos/random.js';
export {
  RealControlPlane,
  type RealControlPlaneOptions,
  realControlPlaneAssetsMissing,
} from './chaos/real/control-plane.js';
export { FaultProxy, type FaultProxyOptions } from './chaos/real/proxy.js';
export {
  type ChaosReport,
  type ClusterChaosFigures,
  chaosPassed,
  formatChaosReport,
  type MultiClusterChaosReport,
} from './chaos/report.js';
export { type ChaosEnv, type ChaosOptions, runChaos } from './chaos/run.js';
export {
  applyFault,
  applyRealFault,
  drawSchedule,
  FAULT_KINDS,
  type FaultKind,
  type FaultTarget,
  REAL_FAULT_KINDS,
  type RealFaultKind,
  type ScheduledFault,
} from './chaos/schedule.js';
export { configMapTraffic, type TrafficContext, type TrafficGenerator } from './chaos/traffic.js';
export {
  SteadyElection,
  type SteadyElectionOptions,
  type SteadyElectionWrite,
  type SteadyElectorOptions,
} from './election/steady-election.js';
export {
  type FakeCall,
  type FakeClient,
  type FakeClientOptions,
  type FakeVerb,
  newFakeClient,
  type RecordingClient,
  recordCalls,
} from './fake/fake-client.js';
export { InProcessTransport, type InProcessTransportOptions } from './fake/transport.js';
export {
  type EnqueuedRequest,
  type EnqueueReason,
  FakeRecorder,
  type ReconcileRun,
  type ReconcilerTestContext,
  type ReconcileTestResult,
  type RecordedEvent,
  type TestReconcilerOptions,
  type TestWatch,
  testReconciler,
} from './reconciler/test-reconciler.js';
export {
  startTestTarget,
  TEST_TARGETS,
  type TestTarget,
  type TestTargetName,
  type TestTargetOptions,
  testTargetName,
} from './target/target.js';
