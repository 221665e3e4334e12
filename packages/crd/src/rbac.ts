import type { Kind } from '@kubeloop/client';
import { parseApiVersion } from '@kubeloop/client/apiutil';
import { SchemaError } from './errors.js';
import { guessPlural, isCustomResourceKind } from './kind.js';

/** An API verb as RBAC names it. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/** One rule of a Role / ClusterRole (rbac.authorization.k8s.io/v1 `PolicyRule`). */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/**
 * A permission a reconciler declares for a client call it makes (kubebuilder's
 * `+kubebuilder:rbac:groups=…,resources=…,verbs=…` marker, as code). Name the kind by its descriptor, or the
 * resource directly with `group` + `resource`.
 */
export type Permission = (
  | { readonly kind: Kind; readonly group?: never; readonly resource?: never }
  | { readonly kind?: never; readonly group: string; readonly resource: string }
) & {
  readonly verbs: readonly Verb[];
  /** A subresource such as `status`, `scale`, `finalizers`: the rule names `<resource>/<subresource>`. */
  readonly subresource?: string;
  /** Limit the rule to objects of these names. */
  readonly resourceNames?: readonly string[];
};

/** What {@link controllerRbac} takes: what a controller watches and calls. */
export interface ControllerRbacOptions {
  /** The controller's name (for messages). */
  readonly name: string;
  /** The kind the controller reconciles (`for`): its informer lists and watches it. */
  readonly for?: Kind;
  /** Kinds it owns (`owns`): listed and watched. */
  readonly owns?: readonly Kind[];
  /** Other kinds it watches (`watches`): listed and watched. */
  readonly watches?: readonly Kind[];
  /** The client calls the reconciler makes beyond reading through the cache. */
  readonly calls?: readonly Permission[];
  /** Whether the manager runs with leader election (a Lease: get, create, update, in its namespace). */
  readonly leaderElection?: boolean;
  /** Whether it records Events (events.k8s.io: create, patch, as the builder's recorder writes them). */
  readonly events?: boolean;
}

/** A controller's RBAC declaration, found by `kubeloop rbac generate` among a module's exports. */
export interface ControllerRbac extends ControllerRbacOptions {
  /** Brand: tells declarations from other exports. */
  readonly controllerRbac: true;
}

/**
 * Declares what a controller needs from the API server: the kinds of its `for`/`owns`/`watches` (list + watch, as
 * its informers make them), the client calls its reconciler makes, leader election and events. Export it from the
 * module `kubeloop rbac generate` reads; pass the same kinds to `newControllerManagedBy(mgr)` so the two cannot
 * drift. The code form of kubebuilder's RBAC markers.
 */
export function controllerRbac(options: ControllerRbacOptions): ControllerRbac {
  return Object.freeze({ ...options, controllerRbac: true as const });
}

/** Whether a value is a {@link ControllerRbac}. */
export function isControllerRbac(v: unknown): v is ControllerRbac {
  return typeof v === 'object' && v !== null && (v as { controllerRbac?: unknown }).controllerRbac === true;
}

// resource names of the kinds kubeloop ships descriptors for whose plural is not the guessed one
const IRREGULAR: Record<string, string> = { Endpoints: 'endpoints' };

/** The `{ group, resource }` a kind's requests go to: a custom kind's plural, else the resource guessed from it. */
export function resourceOf(k: Kind): { group: string; resource: string } {
  const { group } = parseApiVersion(k.apiVersion);
  if (isCustomResourceKind(k)) return { group, resource: k.plural };
  return { group, resource: IRREGULAR[k.kind] ?? guessPlural(k.kind) };
}

const VERB_ORDER: Verb[] = [
  'get',
  'list',
  'watch',
  'create',
  'update',
  'patch',
  'delete',
  'deletecollection',
];

interface Grant {
  group: string;
  resource: string;
  names: string;
  verbs: Set<string>;
}

function add(
  grants: Map<string, Grant>,
  group: string,
  resource: string,
  verbs: readonly string[],
  names: readonly string[] = [],
): void {
  const key = `${group}\u0000${resource}\u0000${[...names].sort().join(',')}`;
  const g = grants.get(key) ?? {
    group,
    resource,
    names: [...names].sort().join(','),
    verbs: new Set<string>(),
  };
  for (const v of verbs) g.verbs.add(v);
  grants.set(key, g);
}

function sortVerbs(verbs: Iterable<string>): string[] {
  return [...verbs].sort(
    (a, b) => VERB_ORDER.indexOf(a as Verb) - VERB_ORDER.indexOf(b as Verb) || a.localeCompare(b),
  );
}

/** Rules sorted by group and resource; resources of one group with the same verbs (and names) share a rule. */
function toRules(grants: Map<string, Grant>): PolicyRule[] {
  const merged = new Map<string, PolicyRule>();
  const sorted = [...grants.values()].sort(
    (a, b) => a.group.localeCompare(b.group) || a.resource.localeCompare(b.resource),
  );
  for (const g of sorted) {
    const verbs = sortVerbs(g.verbs);
    const key = `${g.group}\u0000${verbs.join(',')}\u0000${g.names}`;
    const rule = merged.get(key);
    if (rule) rule.resources.push(g.resource);
    else
      merged.set(key, {
        apiGroups: [g.group],
        resources: [g.resource],
        verbs,
        ...(g.names ? { resourceNames: g.names.split(',') } : {}),
      });
  }
  return [...merged.values()];
}

/**
 * The rules the declared controllers need: `rules` for the (Cluster)Role of the manager, `leaderElection` for the
 * Role in the manager's namespace (empty when no controller uses leader election). Duplicates merge, verbs are
 * sorted in API order; the output is stable.
 */
export function rbacRules(controllers: readonly ControllerRbac[]): {
  rules: PolicyRule[];
  leaderElection: PolicyRule[];
} {
  const grants = new Map<string, Grant>();
  const lease = new Map<string, Grant>();
  for (const c of controllers) {
    for (const k of [...(c.for ? [c.for] : []), ...(c.owns ?? []), ...(c.watches ?? [])]) {
      const { group, resource } = resourceOf(k);
      add(grants, group, resource, ['list', 'watch']);
    }
    for (const [i, p] of (c.calls ?? []).entries()) {
      let target: { group: string; resource: string };
      if (p.kind) target = resourceOf(p.kind);
      else if (typeof p.resource === 'string' && typeof p.group === 'string')
        target = { group: p.group, resource: p.resource };
      else
        throw new SchemaError(
          '',
          `controller ${c.name}: calls[${i}] names neither a kind nor group + resource`,
        );
      if (p.verbs.length === 0) throw new SchemaError('', `controller ${c.name}: calls[${i}] has no verbs`);
      const resource = p.subresource ? `${target.resource}/${p.subresource}` : target.resource;
      add(grants, target.group, resource, p.verbs, p.resourceNames);
    }
    if (c.events) add(grants, 'events.k8s.io', 'events', ['create', 'patch']);
    if (c.leaderElection) add(lease, 'coordination.k8s.io', 'leases', ['get', 'create', 'update']);
  }
  return { rules: toRules(grants), leaderElection: toRules(lease) };
}

/** Options of {@link rbacManifests}. */
export interface RbacManifestOptions {
  /** Name of the ClusterRole (or Role); default `manager-role`, as kubebuilder names it. */
  readonly name?: string;
  /** The manager's namespace: where the leader-election Role goes; with `namespaced`, where the Role goes. */
  readonly namespace?: string;
  /** A Role in `namespace` instead of a ClusterRole (a manager that watches one namespace). */
  readonly namespaced?: boolean;
  /** `namespace/name` of the manager's ServiceAccount: adds the (Cluster)RoleBinding and RoleBinding for it. */
  readonly serviceAccount?: string;
}

/**
 * The RBAC manifests of the declared controllers, as controller-gen's `rbac:roleName=manager-role` writes them plus
 * kubebuilder's leader-election Role: a ClusterRole (or Role) with {@link rbacRules}' rules, a `<name>-leader-election`
 * Role when leader election is declared, and bindings to the ServiceAccount when one is given.
 */
export function rbacManifests(
  controllers: readonly ControllerRbac[],
  options: RbacManifestOptions = {},
): Record<string, unknown>[] {
  const name = options.name ?? 'manager-role';
  const { rules, leaderElection } = rbacRules(controllers);
  if (options.namespaced && !options.namespace)
    throw new SchemaError('', 'a namespaced Role needs a namespace');
  if (leaderElection.length > 0 && !options.namespace && !options.serviceAccount)
    throw new SchemaError(
      '',
      'leader election is declared: give the manager namespace (--namespace or --service-account ns/name)',
    );
  let sa: { namespace: string; name: string } | undefined;
  if (options.serviceAccount) {
    const [saNs, saName, ...rest] = options.serviceAccount.split('/');
    if (!saNs || !saName || rest.length > 0)
      throw new SchemaError(
        '',
        `serviceAccount ${JSON.stringify(options.serviceAccount)}: expected namespace/name`,
      );
    sa = { namespace: saNs, name: saName };
  }
  const ns = options.namespace ?? sa?.namespace;
  const out: Record<string, unknown>[] = [];
  const rbac = 'rbac.authorization.k8s.io/v1';
  const subjects = sa ? [{ kind: 'ServiceAccount', name: sa.name, namespace: sa.namespace }] : undefined;
  const roleKind = options.namespaced ? 'Role' : 'ClusterRole';
  out.push({
    apiVersion: rbac,
    kind: roleKind,
    metadata: { name, ...(options.namespaced ? { namespace: ns } : {}) },
    rules,
  });
  if (subjects)
    out.push({
      apiVersion: rbac,
      kind: `${roleKind}Binding`,
      metadata: { name, ...(options.namespaced ? { namespace: ns } : {}) },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name },
      subjects,
    });
  if (leaderElection.length > 0) {
    const le = `${name}-leader-election`;
    out.push({
      apiVersion: rbac,
      kind: 'Role',
      metadata: { name: le, namespace: ns },
      rules: leaderElection,
    });
    if (subjects)
      out.push({
        apiVersion: rbac,
        kind: 'RoleBinding',
        metadata: { name: le, namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: le },
        subjects,
      });
  }
  return out;
}
