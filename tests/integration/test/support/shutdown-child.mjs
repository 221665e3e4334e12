// A manager in a child process for the graceful-shutdown test (run with `node`, imports the built
// @kubeloop/builder). One controller on ConfigMaps whose reconcile takes RECONCILE_MS and ends with a
// patch; leader election with release-on-cancel. Prints one JSON line per event on stdout.
import { ConfigMap, newControllerManagedBy, newManager, setupSignalHandler } from '@kubeloop/builder';

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
  namespace: ns,
  leaderElection: true,
  leaderElectionID: 'lock',
  leaderElectionNamespace: ns,
  leaderElectionIdentity: 'child',
  leaderElectionReleaseOnCancel: true,
  leaseDurationMs: 2000,
  renewDeadlineMs: 1500,
  retryPeriodMs: 500,
  gracefulShutdownTimeoutMs: Number(env.GRACE_MS),
});
const client = mgr.getClient();
newControllerManagedBy(mgr)
  .for(ConfigMap)
  .complete({
    async reconcile(_ctx, req) {
      say('reconcile-start', { name: req.name });
      await new Promise((r) => setTimeout(r, Number(env.RECONCILE_MS)));
      await client.patch(ConfigMap, req, {
        type: 'merge',
        data: { metadata: { annotations: { done: 'yes' } } },
      });
      say('reconcile-end', { name: req.name });
    },
  });
const signal = setupSignalHandler();
signal.addEventListener('abort', () => say('signal'));
void mgr.elected().then(() => say('elected'));
try {
  await mgr.start(signal);
  say('stopped');
  process.exit(0);
} catch (err) {
  say('error', { name: err?.name, message: String(err?.message ?? err) });
  process.exit(1);
}
