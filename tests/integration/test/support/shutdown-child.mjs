// A manager in a child process for the graceful-shutdown test (run with `node`, imports the built
// @kubeloop/builder). One controller on ConfigMaps whose reconcile takes RECONCILE_MS (or, with
// RECONCILE_MS=signal, lasts until 500 ms after the process got its first signal) and ends with a patch; leader
// election with release-on-cancel (60 s / 45 s / 1 s: the test checks the release, never an expiry, so the lease
// is long enough that a child starved of CPU for tens of seconds still renews in time; with 6 s / 4 s a child
// that was not scheduled for longer than its renew deadline stopped with LeaderElectionLostError before the
// test's signal). Prints one JSON line per event on stdout.
import { ConfigMap, newControllerManagedBy, newManager, setupSignalHandler } from '@kubeloop/builder';
import { onAbort } from '@kubeloop/core';

const env = process.env;
const say = (ev, extra = {}) => process.stdout.write(`${JSON.stringify({ ev, t: Date.now(), ...extra })}\n`);
const config = {
  host: env.HOST,
  tlsClientConfig: { caData: env.CA },
  bearerToken: env.TOKEN,
  qps: -1,
  burst: 0,
  timeoutMs: 0,
  userAgent: 'shutdown-child',
};
const ns = env.NAMESPACE;
const mgr = newManager(config, {
  gracefulShutdownTimeoutMs: Number(env.GRACE_MS),
  cache: { defaultNamespaces: [ns] },
  leaderElection: {
    id: 'lock',
    namespace: ns,
    identity: 'child',
    releaseOnCancel: true,
    leaseDurationMs: 60_000,
    renewDeadlineMs: 45_000,
    retryPeriodMs: 1000,
  },
});
const client = mgr.getClient();
const signal = setupSignalHandler();
onAbort(signal, () => say('signal'));
// RECONCILE_MS=signal: until the signal, then 500 ms more (the reconcile is still running while the manager
// stops, as a real one would be; ending on the signal itself raced the worker's next get).
const work = async () => {
  if (env.RECONCILE_MS !== 'signal') return new Promise((r) => setTimeout(r, Number(env.RECONCILE_MS)));
  await new Promise((r) => onAbort(signal, r));
  await new Promise((r) => setTimeout(r, 500));
};
newControllerManagedBy(mgr)
  .for(ConfigMap)
  .complete({
    async reconcile(_ctx, req) {
      say('reconcile-start', { name: req.name });
      await work();
      await client.patch(ConfigMap, req, {
        type: 'merge',
        data: { metadata: { annotations: { done: 'yes' } } },
      });
      say('reconcile-end', { name: req.name });
    },
  });
void mgr.elected().then(() => say('elected'));
try {
  await mgr.start(signal);
  say('stopped');
  process.exit(0);
} catch (err) {
  say('error', { name: err?.name, message: String(err?.message ?? err) });
  process.exit(1);
}
