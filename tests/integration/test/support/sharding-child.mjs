// One sharded replica in a child process for the sharding subprocess test (run with `node`, imports the
// built @kubeloop/builder). Reconciles ConfigMaps of NAMESPACE in the sharding group "cm" as IDENTITY, with
// the lease timings LEASE_DURATION_MS, RENEW_DEADLINE_MS, RETRY_PERIOD_MS and DRAIN_TIMEOUT_MS,
// each reconcile 20-100 ms and revisited about every 2 s. Prints one JSON line per reconcile start/end (and
// 'loaded' once its modules are loaded).
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ConfigMap,
  newControllerManagedBy,
  newManager,
  newSharding,
  setupSignalHandler,
} from '@kubeloop/builder';

const env = process.env;
const say = (ev, extra = {}) => process.stdout.write(`${JSON.stringify({ ev, t: Date.now(), ...extra })}\n`);
// The handlers first: from its first line on, a SIGTERM stops this replica cleanly instead of killing it.
const signal = setupSignalHandler();
say('loaded');
// With HOLD set, the replica boots (node and the built builder loaded) but joins only once a line arrives
// on stdin: the test then times the join, not a cold process start on a loaded machine.
if (env.HOLD) {
  const { createInterface } = await import('node:readline');
  await new Promise((resolve) => createInterface({ input: process.stdin }).once('line', resolve));
}
const mgr = newManager(
  {
    host: env.HOST,
    tlsClientConfig: { caData: env.CA },
    bearerToken: env.TOKEN,
    qps: -1,
    burst: 0,
    timeoutMs: 0,
    userAgent: `sharding-child-${env.IDENTITY}`,
  },
  { cache: { defaultNamespaces: [env.NAMESPACE] }, gracefulShutdownTimeoutMs: 5000 },
);
// The sharding's own account of membership, as JSON lines too (view changes, fencing, failed renewals), so a
// failed run says why the replicas did not agree.
const SHARDING_MESSAGES = /Membership changed|Acknowledged|renew|Renewing|Listing|Drain deadline/;
const shardLog = {
  debug() {},
  info(fields, msg) {
    if (SHARDING_MESSAGES.test(msg)) say('log', { level: 'info', msg, members: fields?.members });
  },
  warn(fields, msg) {
    say('log', { level: 'warn', msg, err: fields?.err ? String(fields.err) : undefined });
  },
  error(fields, msg) {
    say('log', { level: 'error', msg, err: fields?.err ? String(fields.err) : undefined });
  },
  child() {
    return shardLog;
  },
};
const sharding = newSharding(mgr, {
  logger: shardLog,
  name: 'cm',
  namespace: env.NAMESPACE,
  identity: env.IDENTITY,
  // The test's timings (sharding-subprocess.test.ts TIMINGS), in ms.
  leaseDurationMs: Number(env.LEASE_DURATION_MS),
  renewDeadlineMs: Number(env.RENEW_DEADLINE_MS),
  retryPeriodMs: Number(env.RETRY_PERIOD_MS),
  drainTimeoutMs: Number(env.DRAIN_TIMEOUT_MS),
});
sharding.complete(newControllerManagedBy(mgr).withOptions({ maxConcurrentReconciles: 8 }), ConfigMap, {
  async reconcile(ctx, req) {
    const key = `${req.namespace}/${req.name}`;
    say('start', { key });
    try {
      await sleep(20 + Math.floor(Math.random() * 80), undefined, { signal: ctx.signal }).catch(() => {});
    } finally {
      say('end', { key });
    }
    return { requeueAfterMs: 1500 + Math.floor(Math.random() * 1000) };
  },
});
try {
  await mgr.start(signal);
  say('stopped');
  process.exit(0);
} catch (err) {
  say('error', { message: String(err) });
  process.exit(1);
}
