/**
 * `runChaos`: a manager under test, random traffic and a seeded fault schedule against an in-process API
 * server (or a real kube-apiserver + etcd started from a folder of binaries); then the faults stop and the run
 * measures what the controller-runtime promises say must hold.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Logger, type Manager, type ManagerOptions, newManager } from '@kubeloop/builder';
import { type ApiClient, Namespace, newClient } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { cachedKeys, settle, waitUntil } from './measure.js';
import { ReconcileProbe } from './probe.js';
import { type Random, randomSeed, seededRandom } from './random.js';
import { RealControlPlane, type RealControlPlaneOptions } from './real/control-plane.js';
import type { ChaosReport } from './report.js';
import {
  applyFault,
  applyRealFault,
  drawSchedule,
  FAULT_KINDS,
  type FaultKind,
  REAL_FAULT_KINDS,
  type RealFaultKind,
  type ScheduledFault,
} from './schedule.js';
import { configMapTraffic, type TrafficContext, type TrafficGenerator } from './traffic.js';

/** What the setup function and the invariant get. */
export interface ChaosEnv {
  /** The in-process API server (its `faults` are driven by the schedule); undefined on a real control plane. */
  readonly server: ApiServer | undefined;
  /** The real control plane (processes and fault proxy); undefined on the in-process server. */
  readonly controlPlane: RealControlPlane | undefined;
  /** The manager under test, not started yet when `setup` runs; its requests carry the faulted token. */
  readonly manager: Manager;
  /**
   * The manager's config: on the in-process server its own bearer token, so faults hit only its requests; on
   * a real control plane the admin's credentials through the fault proxy, so network faults hit only it.
   */
  readonly config: RestConfig;
  /** A client for checks and traffic: admin token, never faulted on the in-process server, no proxy on a real one. */
  readonly client: ApiClient;
  /** The namespace the run uses (the manager's cache is scoped to it). */
  readonly namespace: string;
  /** Wrap the reconciler of the controller `for` the traffic's kind with `probe.wrap(kind, mgr.getClient(), r)`. */
  readonly probe: ReconcileProbe;
  /** The traffic generator's kind and names. */
  readonly traffic: TrafficGenerator;
}

/** Options of {@link runChaos}. */
export interface ChaosOptions {
  /** Seed for the schedule and the traffic; default a random one (always reported). */
  seed?: number;
  /** Objects created before the manager starts. Default 200. */
  objects?: number;
  /** **Milliseconds** of traffic and faults. Default 20,000. */
  durationMs?: number;
  /** Mean **milliseconds** between faults. Default 1,000. */
  faultGapMs?: number;
  /** Writes per second during the fault phase. Default 40. */
  writesPerSecond?: number;
  /**
   * The fewest writes the fault phase makes: it lasts `durationMs` **and** until this many writes were sent
   * (each write waits for its answer). For a run whose assertion needs traffic to happen: on a starved
   * machine a short phase can otherwise end after one or two writes. Default 0 (the duration alone).
   */
  minWrites?: number;
  /**
   * **Milliseconds** after the faults stop within which the cache must equal the server and nothing be lost.
   * Default 40,000: 10 s plus the reflector's largest backoff (client-go's 30 s, jitter included), which a
   * dense schedule can leave the reflector sleeping in when the faults stop. `settledAfterMs` reports how
   * long it actually took.
   */
  settleMs?: number;
  /**
   * Fault kinds drawn from; default every one of {@link FAULT_KINDS}, or of {@link REAL_FAULT_KINDS} with
   * `realControlPlane`. Kinds of the other target are refused.
   */
  faults?: readonly (FaultKind | RealFaultKind)[];
  /**
   * Run against a real kube-apiserver + etcd instead of the in-process server: the options to start one
   * (the harness starts it and stops it at the end; see {@link RealControlPlane.start}) or a running one (left
   * running, its faults cleared). Process and network faults then replace envtest's request faults.
   */
  realControlPlane?: RealControlPlaneOptions | RealControlPlane;
  /**
   * Build the controllers on `env.manager` (do not start it). The controller for the traffic's kind must
   * wrap its reconciler with `env.probe.wrap(env.traffic.kind, env.manager.getClient(), reconciler)`.
   */
  setup(env: ChaosEnv): void | Promise<void>;
  /** The writes; default {@link configMapTraffic}. */
  traffic?: TrafficGenerator;
  /** Checked after the settle phase: return the violations (empty = holds). */
  invariant?(env: ChaosEnv): readonly string[] | Promise<readonly string[]>;
  /** Progress lines (the schedule as it is applied, the phases); default none. */
  log?(line: string): void;
  /** The manager's logger (e.g. to see why a run failed); default none. */
  logger?: Logger;
  /** More options of the manager under test (e.g. `cache: { readYourWrites: true }`); its namespace stays the run's. */
  manager?: Omit<ManagerOptions, 'logger'>;
}

/**
 * Run a chaos schedule against a controller. Starts an in-process API server (or, with `realControlPlane`,
 * kube-apiserver + etcd from a folder of binaries, the manager talking to it through a fault proxy), creates a
 * namespace and the starting objects, calls `setup` to build the controllers on a fresh manager (scoped to the
 * namespace, with its own bearer token on the in-process server), starts it, waits for its cache to sync, then for `durationMs` makes random
 * writes while applying the seeded fault schedule. The faults then stop (rules cleared, black holes
 * released) and within `settleMs` the cache must equal the server and every object's last write must have
 * been seen by a reconcile. Stops everything before returning.
 *
 * The same seed gives the same schedule and the same writes (the timing of the system under test still
 * varies). Follows the promises of client-go's informers and controller-runtime's controllers: level-based
 * reconciliation eventually sees the latest state, a key is never reconciled by two workers at once.
 * @throws whatever `setup` throws, or an error if the manager's cache does not sync within 60 s; TypeError
 *   when `faults` names a kind the target cannot make; what {@link RealControlPlane.start} throws.
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const seed = options.seed ?? randomSeed();
  const root = seededRandom(seed);
  const scheduleRandom = root.fork();
  const trafficRandom = root.fork();
  const objects = options.objects ?? 200;
  const durationMs = options.durationMs ?? 20_000;
  const settleMs = options.settleMs ?? 40_000;
  const log = options.log ?? (() => {});
  const traffic = options.traffic ?? configMapTraffic();
  const real = options.realControlPlane;
  const kinds: readonly string[] = options.faults ?? (real ? REAL_FAULT_KINDS : FAULT_KINDS);
  const allowed: readonly string[] = real ? REAL_FAULT_KINDS : FAULT_KINDS;
  const wrong = kinds.filter((k) => !allowed.includes(k));
  if (wrong.length)
    throw new TypeError(
      `faults: ${wrong.join(', ')} cannot be made on ${real ? 'a real control plane' : 'the in-process server'}; allowed: ${allowed.join(', ')}`,
    );
  const schedule = drawSchedule(
    scheduleRandom,
    durationMs,
    options.faultGapMs ?? 1000,
    kinds as readonly (FaultKind | RealFaultKind)[],
  );

  let unhandled = 0;
  const onUnhandled = () => {
    unhandled++;
  };
  process.on('unhandledRejection', onUnhandled);

  let server: ApiServer | undefined;
  let controlPlane: RealControlPlane | undefined;
  let ownControlPlane = false;
  let client: ApiClient;
  // Setup and the settle phase's lists: on a real control plane a list of 10,000 objects on a loaded box outlasts
  // the traffic client's 10 s timeout, so they get their own client with a longer one.
  let checkClient: ApiClient;
  let config: RestConfig;
  let token = '';
  try {
    if (real) {
      if (real instanceof RealControlPlane) controlPlane = real;
      else {
        controlPlane = await RealControlPlane.start(real);
        ownControlPlane = true;
      }
      // a paused or stopped server must not hang the traffic's writes for the default 30 s
      client = newClient({
        ...controlPlane.config,
        qps: -1,
        burst: 0,
        timeoutMs: 10_000,
        userAgent: 'kubeloop-chaos-traffic',
      });
      checkClient = newClient({
        ...controlPlane.config,
        qps: -1,
        burst: 0,
        timeoutMs: 120_000,
        userAgent: 'kubeloop-chaos-check',
      });
      config = {
        ...controlPlane.proxiedConfig(),
        qps: -1,
        burst: 0,
        timeoutMs: 30_000,
        userAgent: 'kubeloop-chaos',
      };
    } else {
      server = await startApiServer();
      token = randomBytes(24).toString('base64url');
      server.auth.addToken(token, { user: 'chaos-manager', groups: ['system:masters'] });
      const base: RestConfig = {
        host: server.url,
        tlsClientConfig: { caData: server.caPem },
        qps: -1,
        burst: 0,
        timeoutMs: 30_000,
        userAgent: 'kubeloop-chaos',
      };
      client = newClient({ ...base, bearerToken: server.token });
      checkClient = client;
      config = { ...base, bearerToken: token };
    }
  } catch (e) {
    process.off('unhandledRejection', onUnhandled);
    if (ownControlPlane) await controlPlane?.stop();
    throw e;
  }
  const namespace = `chaos-${seed.toString(36)}-${randomBytes(3).toString('hex')}`;
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  try {
    // Setup goes through the checks' client: on a loaded box creating thousands of objects must not fail on the
    // traffic client's short timeout.
    await checkClient.create(Namespace, { metadata: { name: namespace } });
    const tctx: TrafficContext = { client, namespace, random: trafficRandom };
    await traffic.populate({ ...tctx, client: checkClient }, objects);
    log(`chaos: seed ${seed}, ${objects} objects, ${schedule.length} faults over ${durationMs} ms`);

    const manager = newManager(config, {
      ...options.manager,
      cache: { ...options.manager?.cache, defaultNamespaces: [namespace] },
      logger: options.logger,
    });
    const probe = new ReconcileProbe();
    const env: ChaosEnv = { server, controlPlane, manager, config, client, namespace, probe, traffic };
    await options.setup(env);
    running = manager.start(stop.signal);
    running.catch(() => {});
    await waitUntil(
      async () =>
        (await cachedKeys(manager.getClient(), traffic.kind, namespace)).size >= Math.min(1, objects),
      60_000,
    );

    // Fault phase: traffic and the schedule run side by side.
    const faultsApplied: Partial<Record<FaultKind | RealFaultKind, number>> = {};
    const faultsFailed: Partial<Record<FaultKind | RealFaultKind, number>> = {};
    let faultsSkipped = 0;
    let writes = 0;
    let writeErrors = 0;
    const t0 = Date.now();
    const gapMs = 1000 / (options.writesPerSecond ?? 40);
    const minWrites = options.minWrites ?? 0;
    const trafficLoop = (async () => {
      let next = t0;
      while (Date.now() - t0 < durationMs || writes < minWrites) {
        writes++;
        try {
          await traffic.step(tctx);
        } catch {
          writeErrors++;
        }
        next += gapMs;
        const wait = next - Date.now();
        if (wait > 0) await sleep(wait);
      }
    })();
    const faultLoop = (async () => {
      for (const f of schedule) {
        const wait = t0 + f.atMs - Date.now();
        if (wait > 0) await sleep(wait);
        // Faults are applied one after another and a real restart takes seconds: once the loop lags past the
        // faults phase, the rest of the schedule is dropped instead of stretching the phase (a 10-minute run had
        // applied 148 of 241 faults after 12.5 minutes).
        if (Date.now() - t0 >= durationMs) {
          faultsSkipped++;
          continue;
        }
        try {
          log(`chaos: +${Date.now() - t0} ms ${f.kind} times=${f.times} param=${f.param}`);
          if (controlPlane) await applyRealFault(f as ScheduledFault<RealFaultKind>, controlPlane);
          else
            await applyFault(f as ScheduledFault<FaultKind>, {
              server: server!,
              token,
              namespace,
              namePrefix: traffic.namePrefix,
            });
          faultsApplied[f.kind] = (faultsApplied[f.kind] ?? 0) + 1;
        } catch (err) {
          faultsFailed[f.kind] = (faultsFailed[f.kind] ?? 0) + 1;
          log(`chaos: fault ${f.kind} could not be applied: ${(err as Error).message}`);
        }
      }
    })();
    await Promise.all([trafficLoop, faultLoop]);
    if (server) {
      server.faults.reset();
      server.faults.releaseBlackholes(true);
    }
    controlPlane?.clearFaults();
    log(`chaos: faults stopped after ${Date.now() - t0} ms; settling`);

    // Settle phase: the cache must equal the server and nothing be lost, within settleMs.
    const { check, settledAfterMs } = await settle(manager, checkClient, traffic, namespace, probe, settleMs);
    const violations = options.invariant ? await options.invariant(env) : [];
    const report: ChaosReport = {
      seed,
      target: controlPlane ? 'real' : 'envtest',
      objects,
      durationMs,
      faultsApplied,
      faultsFailed,
      faultsSkipped,
      writes,
      writeErrors,
      reconciles: probe.reconciles,
      reconcileErrors: probe.reconcileErrors,
      lostChanges: check.lost.length,
      divergentCacheEntries: check.divergent.length,
      settledAfterMs,
      concurrentReconciles: probe.concurrentReconciles,
      unhandledRejections: unhandled,
      invariantViolations: violations,
      examples: [
        ...check.lost.slice(0, 3).map((k) => `lost ${k}`),
        ...check.divergent.slice(0, 3).map((k) => `divergent ${k}`),
      ],
    };
    return report;
  } finally {
    stop.abort();
    await running?.catch(() => {});
    await client.close();
    if (checkClient !== client) await checkClient.close();
    if (server) await server.stop();
    if (controlPlane) {
      if (ownControlPlane) await controlPlane.stop();
      else controlPlane.clearFaults();
    }
    // Late rejections from the stop are counted too; then the listener goes.
    await sleep(10);
    process.off('unhandledRejection', onUnhandled);
  }
}

export type { Random };
