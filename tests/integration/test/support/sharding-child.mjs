// One sharded replica in a child process for the sharding subprocess test (run with `node`, imports the
// built @kubeloop/builder). Reconciles ConfigMaps of NAMESPACE in the sharding group "cm" as IDENTITY,
// each reconcile 20-100 ms and revisited about every 2 s. Prints one JSON line per reconcile start/end.
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
  { namespace: env.NAMESPACE, gracefulShutdownTimeoutMs: 5000 },
);
const sharding = newSharding(mgr, {
  name: 'cm',
  namespace: env.NAMESPACE,
  identity: env.IDENTITY,
  leaseDurationMs: 2000,
  renewDeadlineMs: 1500,
  retryPeriodMs: 500,
  drainTimeoutMs: 1000,
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
const signal = setupSignalHandler();
try {
  await mgr.start(signal);
  say('stopped');
  process.exit(0);
} catch (err) {
  say('error', { message: String(err) });
  process.exit(1);
}
