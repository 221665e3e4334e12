import { Counter, Gauge, type Registry } from 'prom-client';
import type { LeaderElectionMetrics } from '../leaderelection/config.js';

const families = new WeakMap<Registry, LeaderElectionMetrics>();

/**
 * controller-runtime's leader election metrics (`pkg/metrics/leaderelection.go`) on `registry`:
 * `leader_election_master_status{name}` (1 while this replica leads the lease `name`, else 0) and
 * `leader_election_slowpath_total{name}`. Pass it as `metrics` to a `LeaderElector`.
 */
export function leaderElectionMetrics(registry: Registry): LeaderElectionMetrics {
  let m = families.get(registry);
  if (m) return m;
  const status = new Gauge({
    name: 'leader_election_master_status',
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
    labelNames: ['name'],
    registers: [registry],
  });
  const slowpath = new Counter({
    name: 'leader_election_slowpath_total',
    help: "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
    labelNames: ['name'],
    registers: [registry],
  });
  m = {
    leaderOn: (name) => status.set({ name }, 1),
    leaderOff: (name) => status.set({ name }, 0),
    slowpathExercised: (name) => slowpath.inc({ name }),
  };
  families.set(registry, m);
  return m;
}
