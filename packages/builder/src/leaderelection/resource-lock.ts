import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { type ApiClient, type KubeObject, kind, newClient } from '@kubeloop/client';
import { StaticRESTMapper } from '@kubeloop/client/apiutil';
import type { RestConfig } from '@kubeloop/config';
import { DEFAULT_RENEW_DEADLINE_MS } from './defaults.js';
import { LeaderElectionConfigError } from './errors.js';
import {
  type LeaderElectionRecord,
  type LeaseSpecJSON,
  leaseSpecToRecord,
  recordToLeaseSpec,
} from './record.js';

/** A coordination.k8s.io/v1 Lease with its spec typed as on the wire. */
export interface LeaseObject extends KubeObject {
  spec?: LeaseSpecJSON;
}

/** The kind descriptor the lease lock reads and writes. */
export const LeaseKind = kind<LeaseObject>('coordination.k8s.io/v1', 'Lease');

/**
 * A client for Lease requests alone, each bounded by `timeoutMs`: its RESTMapper knows the Lease and nothing
 * else, so no request goes to discovery. Discovery (GET /api, /apis) is not what the short timeout budgets
 * for, and on a loaded kube-apiserver it alone outlasted it: no campaign ever read the Lease. client-go's lock
 * uses the typed coordination/v1 client, which does no discovery either.
 */
export function newLeaseClient(config: RestConfig, timeoutMs: number): ApiClient {
  return newClient(
    { ...config, timeoutMs },
    {
      restMapper: new StaticRESTMapper([
        {
          gvk: { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' },
          resource: { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' },
          scope: 'Namespaced',
        },
      ]),
    },
  );
}

/** What {@link ResourceLock.get} returns: the record and its raw form, compared to detect a change. */
export interface ObservedRecord {
  readonly record: LeaderElectionRecord;
  /** A canonical string of the stored record; two reads are "the same" when their `raw` are equal. */
  readonly raw: string;
}

/**
 * ResourceLock knows how to read and write the leader election record of one lock object (client-go
 * `resourcelock.Interface`). Calls take the caller's signal, which bounds one request.
 */
export interface ResourceLock {
  /** Reads the record. @throws a StatusError (`isNotFound`) when the lock object does not exist. */
  get(signal: AbortSignal): Promise<ObservedRecord>;
  /** Creates the lock object holding `record`. @throws a StatusError (e.g. AlreadyExists) on failure. */
  create(record: LeaderElectionRecord, signal: AbortSignal): Promise<void>;
  /**
   * Replaces the record, conditional on the object read or written last (optimistic concurrency: a
   * concurrent writer makes it throw a 409 Conflict StatusError).
   * @throws LeaderElectionConfigError when neither `get` nor `create` succeeded before.
   */
  update(record: LeaderElectionRecord, signal: AbortSignal): Promise<void>;
  /** This candidate's identity, as written in `holderIdentity`. */
  identity(): string;
  /** `namespace/name` of the lock object, for logs and metrics. */
  describe(): string;
  /** Releases resources (e.g. connections the lock opened itself). */
  close?(): Promise<void>;
}

/** Options of {@link LeaseLock}. */
export interface LeaseLockOptions {
  /** Client for the Lease requests; give it a request timeout (see {@link newResourceLock}). */
  readonly client: ApiClient;
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  /** Labels put on the Lease when this lock creates it (controller-runtime `LeaderElectionLabels`). */
  readonly labels?: Readonly<Record<string, string>>;
  /** Close `client` on {@link LeaseLock.close} (set when the lock made the client). @defaultValue false */
  readonly ownsClient?: boolean;
}

/** A lock on a coordination.k8s.io/v1 Lease (client-go `resourcelock.LeaseLock`). */
export class LeaseLock implements ResourceLock {
  readonly #o: LeaseLockOptions;
  #lease: LeaseObject | undefined;

  constructor(options: LeaseLockOptions) {
    if (!options.identity) throw new LeaderElectionConfigError('the lock identity is empty');
    if (!options.name) throw new LeaderElectionConfigError('the lease name is empty');
    if (!options.namespace) throw new LeaderElectionConfigError('the lease namespace is empty');
    this.#o = options;
  }

  async get(signal: AbortSignal): Promise<ObservedRecord> {
    const lease = await this.#o.client.get(
      LeaseKind,
      { namespace: this.#o.namespace, name: this.#o.name },
      { signal },
    );
    this.#lease = lease;
    const record = leaseSpecToRecord(lease.spec);
    return { record, raw: rawOf(record) };
  }

  async create(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    this.#lease = await this.#o.client.create(
      LeaseKind,
      {
        apiVersion: LeaseKind.apiVersion,
        kind: LeaseKind.kind,
        metadata: {
          namespace: this.#o.namespace,
          name: this.#o.name,
          ...(this.#o.labels && Object.keys(this.#o.labels).length > 0
            ? { labels: { ...this.#o.labels } }
            : {}),
        },
        spec: recordToLeaseSpec(record),
      },
      { signal },
    );
  }

  async update(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    const current = this.#lease;
    if (!current) throw new LeaderElectionConfigError('lease not initialized: call get or create first');
    this.#lease = await this.#o.client.update(
      LeaseKind,
      { ...current, spec: { ...current.spec, ...recordToLeaseSpec(record) } },
      { signal },
    );
  }

  identity(): string {
    return this.#o.identity;
  }

  describe(): string {
    return `${this.#o.namespace}/${this.#o.name}`;
  }

  async close(): Promise<void> {
    if (this.#o.ownsClient) await this.#o.client.close();
  }
}

/** A canonical string of a record (fixed key order, times as epoch ms). */
export function rawOf(r: LeaderElectionRecord): string {
  return JSON.stringify([
    r.holderIdentity,
    r.leaseDurationSeconds,
    r.acquireTime?.getTime() ?? null,
    r.renewTime?.getTime() ?? null,
    r.leaderTransitions,
  ]);
}

/** Where a pod finds its own namespace (the service account's namespace file). */
export const IN_CLUSTER_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * A candidate identity as controller-runtime makes it: `<hostname>_<uuid>`, unique per process even when
 * two replicas share a host name.
 */
export function defaultIdentity(): string {
  return `${hostname()}_${randomUUID()}`;
}

/**
 * The namespace for the lease: `namespace` when given, else the in-cluster namespace file
 * (controller-runtime `getInClusterNamespace`).
 * @throws LeaderElectionConfigError when neither is available (not running in a cluster).
 */
export function resolveLeaseNamespace(namespace?: string, namespaceFile = IN_CLUSTER_NAMESPACE_FILE): string {
  if (namespace) return namespace;
  let text: string;
  try {
    text = readFileSync(namespaceFile, 'utf8');
  } catch {
    throw new LeaderElectionConfigError(
      `no leader election namespace given and ${namespaceFile} is not readable (not running in a cluster?): set the namespace (\`leaderElection.namespace\` of the manager, \`namespace\` of newResourceLock)`,
    );
  }
  const ns = text.trim();
  if (!ns)
    throw new LeaderElectionConfigError(
      `${namespaceFile} is empty: set the leader election namespace (\`leaderElection.namespace\` of the manager, \`namespace\` of newResourceLock)`,
    );
  return ns;
}

/** Options of {@link newResourceLock} (controller-runtime `leaderelection.Options`). */
export interface ResourceLockOptions {
  /** Name of the Lease (controller-runtime `LeaderElectionID`). */
  readonly id: string;
  /** Namespace of the Lease. @defaultValue the in-cluster namespace file's content */
  readonly namespace?: string;
  /** @defaultValue {@link defaultIdentity}() (`<hostname>_<uuid>`) */
  readonly identity?: string;
  /** Labels put on the Lease when it is created. */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * Timeout of each Lease request in ms. @defaultValue `max(1000, renewDeadlineMs / 2)` (controller-runtime
   * sets the lock client's timeout so, so that one hung request cannot eat the renew deadline)
   */
  readonly requestTimeoutMs?: number;
  /** Renew deadline the lock serves, in ms (only for the default request timeout). @defaultValue 10000 */
  readonly renewDeadlineMs?: number;
}

/**
 * A {@link LeaseLock} with its own client made from `config`, whose requests time out after
 * `requestTimeoutMs` (controller-runtime `leaderelection.NewResourceLock`). The lock closes that client.
 * @throws LeaderElectionConfigError when the id is empty or the namespace cannot be found.
 */
export function newResourceLock(config: RestConfig, options: ResourceLockOptions): LeaseLock {
  if (!options.id) throw new LeaderElectionConfigError('the leader election id (Lease name) is empty');
  const namespace = resolveLeaseNamespace(options.namespace);
  const timeoutMs =
    options.requestTimeoutMs ?? Math.max(1000, (options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS) / 2);
  const client = newLeaseClient(config, timeoutMs);
  return new LeaseLock({
    client,
    namespace,
    name: options.id,
    identity: options.identity ?? defaultIdentity(),
    labels: options.labels,
    ownsClient: true,
  });
}
