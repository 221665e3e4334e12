/**
 * `runMultiClusterChaos`: a multi-cluster manager (or several sharded replicas of it) over N member clusters,
 * each an in-process API server with its own random traffic and its own seeded fault schedule; then the faults
 * stop and the run measures, per cluster, what the promises say must hold.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Logger,
  type MultiClusterManager,
  type MultiClusterManagerOptions,
  newMetricsRegistry,
  newMultiClusterManager,
  newSharding,
  type Sharding,
  type ShardingOptions,
  StaticProvider,
} from '@kubeloop/builder';
import { type ApiClient, type Kind, Namespace, newClient } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { type ApiServer, startApiServer } from '@kubeloop/envtest';
import { cachedKeys, explainLost, measure, waitUntil } from './measure.js';
import { ReconcileProbe } from './probe.js';
import { randomSeed, seededRandom } from './random.js';
import type { ClusterChaosFigures, MultiClusterChaosReport } from './report.js';
import { applyFault, drawSchedule, FAULT_KINDS, type FaultKind } from './schedule.js';
import { configMapTraffic, type TrafficContext, type TrafficGenerator } from './traffic.js';

/** One API server of a multi-cluster run. */
export interface ChaosCluster {
  /** `management`, or `member-1` … `member-N` (the name the provider engages it under). */
  readonly name: string;
  readonly server: ApiServer;
  /** An admin client: never faulted (the traffic's writes and the checks). */
  readonly client: ApiClient;
}

/** What the setup function of a multi-cluster run gets, once per replica. */
export interface MultiClusterChaosEnv {
  /** The management cluster (the managers' own; the sharding Leases live there). Never faulted. */
  readonly management: ChaosCluster;
  /** The member clusters, engaged by a static provider; each has its own fault schedule. */
  readonly members: readonly ChaosCluster[];
  /** This replica's manager, not started yet; its requests to every server carry this replica's bearer token. */
  readonly manager: MultiClusterManager;
  /** This replica's index, from 0. */
  readonly replica: number;
  /** With more than one replica: this replica's sharding member (ownership by (cluster, key)); pass it to `withSharding`. */
  readonly sharding: Sharding | undefined;
  /** The namespace the run uses in every cluster (every cluster cache is scoped to it). */
  readonly namespace: string;
  /**
   * Shared by every replica: wrap the reconciler of the controller `for` {@link MultiClusterChaosEnv.kind} with
   * `probe.wrap(kind, (c) => manager.getCluster(c).getClient(), r)`.
   */
  readonly probe: ReconcileProbe;
  /** The kind the traffic writes in every member. */
  readonly kind: Kind;
}

/** Options of {@link runMultiClusterChaos}. */
export interface MultiClusterChaosOptions {
  /** Seed for every schedule and all traffic; default a random one (always reported). */
  seed?: number;
  /** Member clusters. Default 3. */
  clusters?: number;
  /** Replicas of the manager; more than one shards (cluster, key) over member Leases. Default 1. */
  replicas?: number;
  /** Objects created in each member before the managers start. Default 100. */
  objects?: number;
  /** **Milliseconds** of traffic and faults. Default 20,000. */
  durationMs?: number;
  /** Mean **milliseconds** between faults, per member cluster. Default 1,000. */
  faultGapMs?: number;
  /** Writes per second, per member cluster. Default 20. */
  writesPerSecond?: number;
  /** **Milliseconds** after the faults stop within which every cache must equal its server (see `runChaos`). Default 40,000. */
  settleMs?: number;
  /** Fault kinds drawn from; default every one of {@link FAULT_KINDS}. Each fault hits one replica's requests to one member. */
  faults?: readonly FaultKind[];
  /** The writes of one member; default {@link configMapTraffic}. All members' generators must write the same kind. */
  traffic?(cluster: string): TrafficGenerator;
  /** Build the controllers on `env.manager` (once per replica; do not start it). */
  setup(env: MultiClusterChaosEnv): void | Promise<void>;
  /** Checked after the settle phase with every replica's env: return the violations (empty = holds). */
  invariant?(envs: readonly MultiClusterChaosEnv[]): readonly string[] | Promise<readonly string[]>;
  /** Progress lines; default none. */
  log?(line: string): void;
  /** The managers' logger; default none. */
  logger?: Logger;
  /** More options of each manager; the cache stays scoped to the run's namespace. */
  manager?: Omit<MultiClusterManagerOptions, 'logger' | 'provider'>;
  /**
   * Timings of the replicas' sharding members; default the library's (15 s lease, 10 s renew deadline, 2 s
   * retry). Short ones make hand-overs happen within the run, but on a starved event loop a replica that cannot
   * renew in time stops reconciling (safety before liveness), which the run reports as lost changes.
   */
  sharding?: Pick<
    ShardingOptions,
    'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs' | 'drainTimeoutMs'
  >;
  /** The profile named in the report's replay line. Default `multicluster`. */
  profile?: string;
}

/** Sharding timings of the replicas: short, so hand-overs happen within the run. */
const SHARD_TIMINGS = {
  leaseDurationMs: 4000,
  renewDeadlineMs: 3000,
  retryPeriodMs: 500,
  drainTimeoutMs: 1000,
};

interface Member extends ChaosCluster {
  readonly traffic: TrafficGenerator;
  readonly ctx: TrafficContext;
  readonly figures: {
    writes: number;
    writeErrors: number;
    faults: Partial<Record<FaultKind, number>>;
    failed: Partial<Record<FaultKind, number>>;
  };
}

/**
 * Runs a chaos schedule against a multi-cluster controller. Starts a management API server and `clusters`
 * member servers in-process, creates a namespace in each and the starting objects in each member, and builds
 * `replicas` multi-cluster managers (each with its own bearer token on every server, a `StaticProvider` of the
 * members, caches scoped to the namespace and, with more than one replica, a sharding member over the
 * management cluster's Leases), calling `setup` for each. It starts them, waits for every replica's cache of
 * every member to hold objects, then for `durationMs` writes to every member while each member's seeded
 * schedule faults the requests of one replica (drawn per fault) or restarts the member. Then the faults stop and
 * within `settleMs` every replica's cache of every member must equal that member and every object's last write
 * must have been seen by a reconcile (on any replica). No (cluster, key) may be reconciled twice at once, on one
 * replica or across them. Stops everything before returning.
 *
 * The invariants are client-go's and controller-runtime's, per cluster (see `runChaos`), plus the sharding
 * hand-over guarantee across replicas.
 * @throws whatever `setup` throws; an error if a cache does not fill within 60 s; TypeError for fewer than one
 *   cluster or replica.
 */
export async function runMultiClusterChaos(
  options: MultiClusterChaosOptions,
): Promise<MultiClusterChaosReport> {
  const seed = options.seed ?? randomSeed();
  const root = seededRandom(seed);
  const nClusters = options.clusters ?? 3;
  const nReplicas = options.replicas ?? 1;
  if (!(nClusters >= 1) || !(nReplicas >= 1))
    throw new TypeError(`clusters and replicas must be at least 1, got ${nClusters} and ${nReplicas}`);
  const objects = options.objects ?? 100;
  const durationMs = options.durationMs ?? 20_000;
  const settleMs = options.settleMs ?? 40_000;
  const log = options.log ?? (() => {});
  const kinds = options.faults ?? FAULT_KINDS;
  const names = Array.from({ length: nClusters }, (_, i) => `member-${i + 1}`);
  const forks = names.map(() => ({ schedule: root.fork(), traffic: root.fork() }));
  const schedules = forks.map((f) => drawSchedule(f.schedule, durationMs, options.faultGapMs ?? 1000, kinds));
  const tokens = Array.from({ length: nReplicas }, () => randomBytes(24).toString('base64url'));
  const namespace = `mcchaos-${seed.toString(36)}-${randomBytes(3).toString('hex')}`;

  let unhandled = 0;
  const onUnhandled = () => {
    unhandled++;
  };
  process.on('unhandledRejection', onUnhandled);
  const servers: ApiServer[] = [];
  const clients: ApiClient[] = [];
  const stops: Array<{ stop: AbortController; done: Promise<unknown> }> = [];
  try {
    const start = async (name: string): Promise<ChaosCluster> => {
      const server = await startApiServer();
      servers.push(server);
      tokens.forEach((t, i) => {
        server.auth.addToken(t, { user: `chaos-replica-${i}`, groups: ['system:masters'] });
      });
      const client = newClient({ ...configOf(server, server.token), userAgent: 'kubeloop-chaos-traffic' });
      clients.push(client);
      await client.create(Namespace, { metadata: { name: namespace } });
      return { name, server, client };
    };
    const management = await start('management');
    const members: Member[] = [];
    for (const [i, name] of names.entries()) {
      const c = await start(name);
      const traffic = options.traffic?.(name) ?? configMapTraffic();
      const ctx: TrafficContext = { client: c.client, namespace, random: forks[i]!.traffic };
      await traffic.populate(ctx, objects);
      members.push({ ...c, traffic, ctx, figures: { writes: 0, writeErrors: 0, faults: {}, failed: {} } });
    }
    const kind = members[0]!.traffic.kind;
    log(
      `chaos multicluster: seed ${seed}, ${nClusters} clusters × ${objects} objects, ${nReplicas} replica(s), ${schedules.reduce((n, s) => n + s.length, 0)} faults over ${durationMs} ms`,
    );

    const probe = new ReconcileProbe();
    const envs: MultiClusterChaosEnv[] = [];
    for (const [replica, token] of tokens.entries()) {
      const provider = new StaticProvider(
        Object.fromEntries(members.map((m) => [m.name, configOf(m.server, token)])),
        { clusterOptions: { cache: { defaultNamespaces: [namespace] } } },
      );
      const manager = newMultiClusterManager(configOf(management.server, token), {
        gracefulShutdownTimeoutMs: 5000,
        metrics: { registry: newMetricsRegistry() },
        ...options.manager,
        cache: { ...options.manager?.cache, defaultNamespaces: [namespace] },
        logger: options.logger,
        provider,
      });
      const sharding =
        nReplicas > 1
          ? newSharding(manager, {
              name: 'chaos',
              namespace,
              identity: `replica-${replica}`,
              ...SHARD_TIMINGS,
            })
          : undefined;
      const env: MultiClusterChaosEnv = {
        management,
        members,
        manager,
        replica,
        sharding,
        namespace,
        probe,
        kind,
      };
      await options.setup(env);
      envs.push(env);
    }
    for (const env of envs) {
      const stop = new AbortController();
      const done = env.manager.start(stop.signal).catch((err: unknown) => err);
      stops.push({ stop, done });
    }
    const cachesOf = (m: ChaosCluster) => envs.map((e) => e.manager.getCluster(m.name).getClient());
    await waitUntil(async () => {
      for (const m of members)
        for (const c of cachesOf(m))
          if ((await cachedKeys(c, kind, namespace)).size < Math.min(1, objects)) return false;
      return true;
    }, 60_000);

    // Fault phase: per member, its traffic and its schedule side by side.
    const t0 = Date.now();
    const gapMs = 1000 / (options.writesPerSecond ?? 20);
    const loops = members.flatMap((m, i) => [
      (async () => {
        let next = t0;
        while (Date.now() - t0 < durationMs) {
          m.figures.writes++;
          try {
            await m.traffic.step(m.ctx);
          } catch {
            m.figures.writeErrors++;
          }
          next += gapMs;
          const wait = next - Date.now();
          if (wait > 0) await sleep(wait);
        }
      })(),
      (async () => {
        const pick = forks[i]!.schedule.fork();
        for (const f of schedules[i]!) {
          const wait = t0 + f.atMs - Date.now();
          if (wait > 0) await sleep(wait);
          if (Date.now() - t0 >= durationMs) break;
          const replica = pick.int(0, nReplicas - 1);
          log(`chaos: +${Date.now() - t0} ms ${m.name} replica-${replica} ${f.kind} times=${f.times}`);
          await applyFault(f, {
            server: m.server,
            token: tokens[replica]!,
            namespace,
            namePrefix: m.traffic.namePrefix,
          }).then(
            () => {
              m.figures.faults[f.kind] = (m.figures.faults[f.kind] ?? 0) + 1;
            },
            (err: unknown) => {
              m.figures.failed[f.kind] = (m.figures.failed[f.kind] ?? 0) + 1;
              log(`chaos: ${m.name} fault ${f.kind} failed: ${(err as Error).message}`);
            },
          );
        }
      })(),
    ]);
    await Promise.all(loops);
    for (const m of members) {
      m.server.faults.reset();
      m.server.faults.releaseBlackholes(true);
    }
    log(`chaos: faults stopped after ${Date.now() - t0} ms; settling`);

    // Settle phase: every replica's cache of every member equals it, and nothing is lost.
    const measureAll = () =>
      Promise.all(members.map((m) => measure(cachesOf(m), m.client, kind, namespace, probe, m.name)));
    const settleStart = Date.now();
    let checks = await measureAll();
    let settledAfterMs = -1;
    while (Date.now() - settleStart < settleMs) {
      if (checks.every((c) => c.lost.length === 0 && c.divergent.length === 0)) {
        settledAfterMs = Date.now() - settleStart;
        break;
      }
      // Every replica's cache of every member is listed per check: poll gently, not to starve the managers.
      await sleep(500);
      checks = await measureAll();
    }
    const violations = options.invariant ? await options.invariant(envs) : [];
    const perCluster: ClusterChaosFigures[] = members.map((m, i) => ({
      name: m.name,
      faultsApplied: m.figures.faults,
      writes: m.figures.writes,
      writeErrors: m.figures.writeErrors,
      reconciles: [...probe.knownKeys()]
        .filter((k) => k.startsWith(`${m.name}/`))
        .reduce((n, k) => n + (probe.observations(k)?.reconciles ?? 0), 0),
      lostChanges: checks[i]!.lost.length,
      divergentCacheEntries: checks[i]!.divergent.length,
    }));
    const total = (of: (m: Member) => Partial<Record<FaultKind, number>>) => {
      const out: Partial<Record<FaultKind, number>> = {};
      for (const m of members)
        for (const [k, n] of Object.entries(of(m)))
          out[k as FaultKind] = (out[k as FaultKind] ?? 0) + (n ?? 0);
      return out;
    };
    const sum = (f: (c: ClusterChaosFigures) => number) => perCluster.reduce((n, c) => n + f(c), 0);
    return {
      seed,
      target: 'envtest',
      profile: options.profile ?? 'multicluster',
      replicas: nReplicas,
      clusters: perCluster,
      objects,
      durationMs,
      faultsApplied: total((m) => m.figures.faults),
      faultsFailed: total((m) => m.figures.failed),
      faultsSkipped: 0,
      writes: sum((c) => c.writes),
      writeErrors: sum((c) => c.writeErrors),
      reconciles: probe.reconciles,
      reconcileErrors: probe.reconcileErrors,
      lostChanges: sum((c) => c.lostChanges),
      divergentCacheEntries: sum((c) => c.divergentCacheEntries),
      settledAfterMs,
      concurrentReconciles: probe.concurrentReconciles,
      unhandledRejections: unhandled,
      invariantViolations: violations,
      examples: checks.flatMap((c) => [
        ...c.lost.slice(0, 2).map((k) => `lost ${k} (${explainLost(k, probe, envs)})`),
        ...c.divergent.slice(0, 2).map((k) => `divergent ${k}`),
      ]),
    };
  } finally {
    for (const s of stops) s.stop.abort();
    await Promise.all(stops.map((s) => s.done));
    for (const c of clients) await c.close();
    for (const s of servers) {
      s.faults.releaseBlackholes(true);
      await s.stop();
    }
    await sleep(10);
    process.off('unhandledRejection', onUnhandled);
  }
}

/** A config for `server` with `token`: no client-side limiter, a 30 s request timeout. */
function configOf(server: ApiServer, token: string): RestConfig {
  return {
    host: server.url,
    tlsClientConfig: { caData: server.caPem },
    bearerToken: token,
    qps: -1,
    burst: 0,
    timeoutMs: 30_000,
    userAgent: 'kubeloop-chaos',
  };
}
