/**
 * The review kinds the API server evaluates instead of storing: `TokenReview` (authentication.k8s.io/v1,
 * answered from the server's own tokens) and `SubjectAccessReview` (authorization.k8s.io/v1, answered by the
 * server's authorizer: everything allowed, or — with `authorization: 'RBAC'` — the stored Roles, ClusterRoles and
 * their bindings, as kube-apiserver's RBAC authorizer evaluates them).
 */
import type { UserInfo } from './auth.js';
import type { Registry } from './registry.js';
import type { ResourceType } from './resource-type.js';

/** What a review needs from the server. */
export interface ReviewEnv {
  readonly registry: Registry;
  /** The user a bearer token stands for (`undefined`: unknown or expired). */
  authenticateToken(token: string): UserInfo | undefined;
  /** The server's authorization mode. */
  readonly authorization: 'AlwaysAllow' | 'RBAC';
  lookup(group: string, version: string, resource: string): ResourceType | undefined;
}

/** The attributes one request is authorized on (apiserver `authorizer.Attributes`). */
export interface AuthorizationAttributes {
  readonly user: string;
  readonly groups: readonly string[];
  readonly verb: string;
  /** A non-resource request's path (`/metrics`); absent for a resource request. */
  readonly path?: string;
  readonly group?: string;
  readonly resource?: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];

/** The status of a review of kind `kind` (`undefined`: not a review this server evaluates). */
export async function reviewStatus(env: ReviewEnv, rt: ResourceType, body: Obj): Promise<Obj | undefined> {
  const spec = isObj(body.spec) ? body.spec : {};
  if (rt.group === 'authentication.k8s.io' && rt.kind === 'TokenReview') {
    const token = typeof spec.token === 'string' ? spec.token : '';
    const user = token ? env.authenticateToken(token) : undefined;
    // As kube-apiserver answers an unknown token: `authenticated` false is omitted (omitempty), with an error.
    if (!user) return { user: {}, error: '[invalid bearer token, token lookup failed]' };
    return { authenticated: true, user: { username: user.name, groups: [...user.groups] } };
  }
  if (rt.group === 'authorization.k8s.io' && rt.kind === 'SubjectAccessReview') {
    const nr = isObj(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined;
    const ra = isObj(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
    const str = (o: Obj | undefined, k: string) =>
      o && typeof o[k] === 'string' ? (o[k] as string) : undefined;
    const attrs: AuthorizationAttributes = {
      user: typeof spec.user === 'string' ? spec.user : '',
      groups: strings(spec.groups),
      verb: str(nr, 'verb') ?? str(ra, 'verb') ?? '',
      ...(nr ? { path: str(nr, 'path') ?? '' } : {}),
      ...(ra
        ? {
            group: str(ra, 'group') ?? '',
            resource: str(ra, 'resource') ?? '',
            ...(str(ra, 'subresource') ? { subresource: str(ra, 'subresource') } : {}),
            ...(str(ra, 'namespace') ? { namespace: str(ra, 'namespace') } : {}),
            ...(str(ra, 'name') ? { name: str(ra, 'name') } : {}),
          }
        : {}),
    };
    const allowed = await authorize(env, attrs);
    return allowed
      ? { allowed: true, reason: env.authorization === 'RBAC' ? 'allowed by RBAC' : '' }
      : { allowed: false };
  }
  return undefined;
}

/**
 * Whether `a` is allowed: always in `AlwaysAllow` mode; in `RBAC` mode for `system:masters`, and when a
 * ClusterRoleBinding (or, for a namespaced request, a RoleBinding of its namespace) binds the user or one of
 * its groups to a role with a matching rule (rbac `RuleAllows`: verbs, and apiGroups + resources[/subresource]
 * + resourceNames for a resource request, nonResourceURLs — exact, or a prefix ending in `*` — for a path;
 * `*` matches anything).
 */
export async function authorize(env: ReviewEnv, a: AuthorizationAttributes): Promise<boolean> {
  if (env.authorization === 'AlwaysAllow') return true;
  if (a.groups.includes('system:masters')) return true;
  const rbac = (resource: string) => env.lookup('rbac.authorization.k8s.io', 'v1', resource);
  const list = async (resource: string, namespace?: string): Promise<Obj[]> => {
    const rt = rbac(resource);
    if (!rt) return [];
    const r = await env.registry.list(rt, namespace ? { namespace } : {});
    return r.entries.map((e) => env.registry.view(rt, e) as Obj);
  };
  const clusterRoles = new Map((await list('clusterroles')).map((r) => [nameOf(r), r]));
  const bindings = [
    ...(await list('clusterrolebindings')),
    ...(a.namespace && a.path === undefined ? await list('rolebindings', a.namespace) : []),
  ];
  const roles = new Map<string, Obj>(
    a.namespace ? (await list('roles', a.namespace)).map((r) => [nameOf(r), r]) : [],
  );
  for (const b of bindings) {
    if (!bindsSubject(b, a)) continue;
    const ref = isObj(b.roleRef) ? b.roleRef : {};
    const isCluster = ref.kind === 'ClusterRole';
    // A ClusterRoleBinding may only reference a ClusterRole; a RoleBinding either kind.
    const role = isCluster ? clusterRoles.get(String(ref.name)) : roles.get(String(ref.name));
    if (!role) continue;
    const rules = Array.isArray(role.rules) ? role.rules.filter(isObj) : [];
    if (rules.some((r) => ruleAllows(r, a))) return true;
  }
  return false;
}

function nameOf(o: Obj): string {
  return isObj(o.metadata) && typeof o.metadata.name === 'string' ? o.metadata.name : '';
}

function bindsSubject(binding: Obj, a: AuthorizationAttributes): boolean {
  const subjects = Array.isArray(binding.subjects) ? binding.subjects.filter(isObj) : [];
  return subjects.some(
    (s) =>
      (s.kind === 'User' && s.name === a.user) || (s.kind === 'Group' && a.groups.includes(String(s.name))),
  );
}

const matches = (list: string[], v: string) => list.includes('*') || list.includes(v);

function ruleAllows(rule: Obj, a: AuthorizationAttributes): boolean {
  if (!matches(strings(rule.verbs), a.verb)) return false;
  if (a.path !== undefined) {
    return strings(rule.nonResourceURLs).some(
      (u) => u === '*' || u === a.path || (u.endsWith('*') && a.path!.startsWith(u.slice(0, -1))),
    );
  }
  if (!matches(strings(rule.apiGroups), a.group ?? '')) return false;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : (a.resource ?? '');
  const resources = strings(rule.resources);
  if (!resources.some((r) => r === '*' || r === resource || (a.subresource && r === `*/${a.subresource}`)))
    return false;
  const names = strings(rule.resourceNames);
  return names.length === 0 || (a.name !== undefined && names.includes(a.name));
}
