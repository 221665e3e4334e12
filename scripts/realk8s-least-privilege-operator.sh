#!/usr/bin/env bash
# Least privilege of a CRD operator on a real kube-apiserver with RBAC (not in CI: it needs a real kube-apiserver
# started with AUTHZ=RBAC and an audit log; docs/compatibility.md says how). scripts/realk8s-least-privilege.sh does
# the same for pod-counter; this one covers the operators whose RBAC is generated from their code
# (`kubeloop rbac generate` over `controllerRbac` declarations):
#   webapp    examples/src/webapp.ts: its CRD and RBAC from `kubeloop crd|rbac generate`, run with --leader-elect;
#             a WebApp becomes a ConfigMap `<name>-web`, a status and an Event
#   scaffold  a project made by create-kubeloop (`init`, `create api` for a namespaced WebApp, `npm run generate`):
#             its config/default kustomization applied as is, the Deployment's args; a WebApp becomes a Deployment
#             and a status
#
# As a cluster would: the manifests are applied as the admin, the ServiceAccount gets a TokenRequest token, the
# token, CA and namespace are laid out where the kubelet mounts them (a private mount namespace), and the manager
# runs with a pod's env. As the admin the script then creates a WebApp, changes its spec, deletes its child and
# edits it; checks: the child follows the spec and is put back (deleted, then edited), the status is written, the
# Lease is held, (webapp) the Event is recorded and its repeat counted (series), the manager stops with exit 0, every informer listed at most twice (a refused watch makes the
# informer list again and again: changes then arrive a relist late), and the audit log has 0 answers 403 to the
# ServiceAccount.
#
# Usage: KUBECONFIG=<admin kubeconfig of the RBAC server> AUDIT_LOG=<its --audit-log-path> \
#          [REMOVE_RULE=<group>/<resource>/<verb>] [STEP_TIMEOUT=180] \
#          scripts/realk8s-least-privilege-operator.sh <webapp|scaffold> [seconds, default 30]
# REMOVE_RULE (core group: empty, e.g. /configmaps/create) takes that one verb out of the applied Roles and
# ClusterRoles: the run must then be refused (at least one 403) and break a named behaviour; it prints
# `RESULT <rule> | <403s> | <what broke>` and exits 0 when both happened. `RULES=1` prints the granted
# <group>/<resource>/<verb> list and exits (scripts/realk8s-rule-removal.sh runs each). Needs root (unshare
# --mount), kubectl, python3 with PyYAML, a built repository (npm run build:all). REUSE_BUILD=1 keeps the compiled
# example (examples/.realk8s-build) or the generated project (packages/create-kubeloop/.render/realk8s-build) and
# uses it again.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${1:?usage: $0 <webapp|scaffold> [seconds]}
SECONDS_TO_RUN=${2:-30}
STEP_TIMEOUT=${STEP_TIMEOUT:-180}
: "${KUBECONFIG:?set KUBECONFIG to the admin kubeconfig of the RBAC server}"
: "${AUDIT_LOG:?set AUDIT_LOG to the --audit-log-path of that server}"
[ -f "$ROOT/packages/crd/dist/cli.js" ] || { echo "build first (npm run build:all)" >&2; exit 2; }
K() { kubectl --kubeconfig "$KUBECONFIG" "$@"; }
KUBELOOP=$ROOT/packages/crd/bin/kubeloop.js
WORK=$(mktemp -d /tmp/kubeloop-least-privilege-XXXXXX)
PROJECT=''
cleanup() {
  rm -rf "$WORK"
  # REUSE_BUILD=1 keeps the compiled example or the generated project for the next run (the rule-removal script)
  [ -n "${REUSE_BUILD:-}" ] || [ -z "$PROJECT" ] || rm -rf "$PROJECT"
}
trap cleanup EXIT
say() { [ -n "${RULES:-}" ] || echo "[$(date -u +%T)] $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
MANIFESTS=$WORK/manifests.yaml

# --- the operator: its manifests, the manager's command line, its names ------------------------------------------
case "$TARGET" in
  webapp)
    NS=webapp-system SA=manager LEASE=webapp-manager CHILD=configmap CHILD_NAME_SUFFIX=-web
    # the example is TypeScript run from source; Node 20 cannot strip types, so compile it beside the examples
    # (inside the repository: its imports resolve the workspace's packages as an installed project's would)
    if [ -n "${REUSE_BUILD:-}" ]; then PROJECT=$ROOT/examples/.realk8s-build; mkdir -p "$PROJECT"
    else PROJECT=$(mktemp -d "$ROOT/examples/.realk8s-XXXXXX"); fi
    [ -f "$PROJECT/out/webapp.js" ] || printf '{"extends":"../tsconfig.json","compilerOptions":{"noEmit":false,"declaration":false,"declarationMap":false,"outDir":"out","rootDir":"../src"},"include":["../src/webapp.ts"]}' \
      > "$PROJECT/tsconfig.json"
    [ -f "$PROJECT/out/webapp.js" ] || node "$ROOT/node_modules/typescript/bin/tsc" -p "$PROJECT/tsconfig.json"
    MODULE=$PROJECT/out/webapp.js
    [ -f "$PROJECT/manifests.yaml" ] || {
      printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n---\n' "$NS"
      printf 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: %s\n  namespace: %s\n---\n' "$SA" "$NS"
      node "$KUBELOOP" crd generate "$MODULE" --stdout
      echo '---'
      node "$KUBELOOP" rbac generate "$MODULE" --stdout --name webapp-manager-role --namespace "$NS" \
        --service-account "$NS/$SA"
    } > "$PROJECT/manifests.yaml"
    cp "$PROJECT/manifests.yaml" "$MANIFESTS"
    CMD=(node "$MODULE" --leader-elect)
    ;;
  scaffold)
    NS=web-op-system SA=web-op-controller-manager LEASE=web-op-leader-election CHILD=deployment CHILD_NAME_SUFFIX=''
    mkdir -p "$ROOT/packages/create-kubeloop/.render"
    if [ -n "${REUSE_BUILD:-}" ]; then PROJECT=$ROOT/packages/create-kubeloop/.render/realk8s-build
    else PROJECT=$(mktemp -d "$ROOT/packages/create-kubeloop/.render/realk8s-XXXXXX"); fi
    [ -f "$PROJECT/web-op/dist/main.js" ] || (
      rm -rf "$PROJECT" && mkdir -p "$PROJECT"
      cd "$PROJECT"
      node "$ROOT/packages/create-kubeloop/dist/cli.js" web-op > /dev/null
      cd web-op
      # the bins an installed project has: kubeloop (of @kubeloop/crd) and tsc
      mkdir -p node_modules/.bin && ln -s "$KUBELOOP" node_modules/.bin/kubeloop
      export PATH=$PWD/node_modules/.bin:$ROOT/node_modules/.bin:$PATH
      kubeloop create api --group apps.example.com --version v1alpha1 --kind WebApp > /dev/null
      npm run --silent generate > /dev/null 2>&1
    )
    K kustomize "$PROJECT/web-op/config/default" > "$MANIFESTS"
    CMD=(node "$PROJECT/web-op/dist/main.js") # + the Deployment's args, read back from the server below
    ;;
  *) fail "unknown target $TARGET (webapp or scaffold)" ;;
esac
SA_USER=system:serviceaccount:$NS:$SA

# The verbs the manifests grant, as <group>/<resource>/<verb>, every Role and ClusterRole together.
if [ -n "${RULES:-}" ]; then
  python3 - "$MANIFESTS" <<'PY'
import sys, yaml
seen = []
for d in yaml.safe_load_all(open(sys.argv[1])):
    if not d or d.get("kind") not in ("Role", "ClusterRole"): continue
    for r in d.get("rules", []):
        for g in r.get("apiGroups", []):
            for res in r.get("resources", []):
                for v in r.get("verbs", []):
                    k = f"{g}/{res}/{v}"
                    if k not in seen: seen.append(k)
print("\n".join(seen))
PY
  exit 0
fi

say "server $(K get --raw /version | python3 -c 'import json,sys; print(json.load(sys.stdin)["gitVersion"])'), target $TARGET"
say "1. apply the $TARGET manifests"
# A fresh start without deleting the namespace (this server has no namespace controller: it would stay
# Terminating): the RBAC and the Lease of an earlier run go.
python3 - "$MANIFESTS" <<'PY' > "$WORK/rbac-names"
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"):
        print(d["kind"].lower(), d["metadata"]["name"], d["metadata"].get("namespace", ""))
PY
while read -r kind name ns; do
  if [ -n "$ns" ]; then K -n "$ns" delete "$kind" "$name" --ignore-not-found > /dev/null
  else K delete "$kind" "$name" --ignore-not-found > /dev/null; fi
done < "$WORK/rbac-names"
K -n "$NS" delete lease "$LEASE" --ignore-not-found > /dev/null 2>&1 || true
K apply -f "$MANIFESTS" > /dev/null
CRD=$(python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") == "CustomResourceDefinition": print(d["metadata"]["name"])' "$MANIFESTS")
K wait --for condition=established --timeout=120s "crd/$CRD" > /dev/null
GROUP=${CRD#*.}
VERSION=$(K get "crd/$CRD" -o jsonpath='{.spec.versions[0].name}')
# The server's RBAC authorizer reads Roles through its own informers: a change takes a moment to count. Wait until
# the ServiceAccount may do every granted verb (an earlier run's removal is undone), and later until it may not do
# the removed one.
can() { # <group>/<resource>[/<subresource>]/<verb> -> yes|no, in the manager's namespace
  local rule=$1 group resource verb sub=()
  group=${rule%%/*} verb=${rule##*/} resource=${rule#*/}; resource=${resource%/*}
  case "$resource" in */*) sub=(--subresource "${resource#*/}"); resource=${resource%%/*} ;; esac
  [ -z "$group" ] || resource=$resource.$group
  K auth can-i "$verb" "$resource" "${sub[@]}" -n "$NS" --as "$SA_USER" 2>/dev/null || true
}
mapfile -t GRANTED < <(python3 - "$MANIFESTS" <<'PY'
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") in ("Role", "ClusterRole"):
        for r in d.get("rules", []):
            for g in r.get("apiGroups", []):
                for res in r.get("resources", []):
                    for v in r.get("verbs", []): print(f"{g}/{res}/{v}")
PY
)
for rule in "${GRANTED[@]}"; do
  for i in $(seq 60); do
    [ "$(can "$rule")" = yes ] && break
    [ "$i" = 60 ] && fail "$SA_USER may not $rule 30 s after its RBAC was applied"
    sleep 0.5
  done
done
[ "$(K auth can-i list secrets --as "$SA_USER" -A 2>/dev/null || true)" = no ] ||
  fail "the server lets $SA_USER list secrets: start it with AUTHZ=RBAC"
if [ -n "${REMOVE_RULE:-}" ]; then
  while read -r kind name ns; do
    case "$kind" in role | clusterrole) ;; *) continue ;; esac
    ns_flag=(); [ -z "$ns" ] || ns_flag=(-n "$ns")
    K "${ns_flag[@]}" get "$kind" "$name" -o json | python3 -c '
import json, sys
group, rest = sys.argv[1].split("/", 1)
resource, verb = rest.rsplit("/", 1)  # a subresource stays in resource: webapps/status
o = json.load(sys.stdin)
rules = []
for r in o.get("rules", []):
    if group in r.get("apiGroups", []) and resource in r.get("resources", []) and verb in r.get("verbs", []):
        r["verbs"] = [v for v in r["verbs"] if v != verb]
    if r["verbs"]: rules.append(r)
o["rules"] = rules
json.dump(o, sys.stdout)' "$REMOVE_RULE" | K replace -f - > /dev/null
  done < "$WORK/rbac-names"
  for i in $(seq 60); do
    [ "$(can "$REMOVE_RULE")" = no ] && break
    [ "$i" = 60 ] && fail "$SA_USER may still $REMOVE_RULE 30 s after it was removed"
    sleep 0.5
  done
  say "rule removed: $REMOVE_RULE"
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
METRICS_PORT=$(free_port) PROBE_PORT=$(free_port)
if [ "$TARGET" = scaffold ]; then
  ARGS=$(K -n "$NS" get deployment web-op-controller-manager -o jsonpath='{range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}')
  say "Deployment args: $(echo "$ARGS" | tr '\n' ' ')"
  while IFS= read -r a; do
    case "$a" in
      --metrics-bind-address=*) CMD+=("--metrics-bind-address=127.0.0.1:$METRICS_PORT") ;;
      --health-probe-bind-address=*) CMD+=("--health-probe-bind-address=127.0.0.1:$PROBE_PORT") ;;
      '') ;;
      *) CMD+=("$a") ;;
    esac
  done <<< "$ARGS"
fi

say "2. TokenRequest for serviceaccount/$SA"
SA_DIR=$WORK/serviceaccount
mkdir -p "$SA_DIR"
K -n "$NS" create token "$SA" --duration=1h > "$SA_DIR/token"
K config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d > "$SA_DIR/ca.crt"
printf '%s' "$NS" > "$SA_DIR/namespace"
SERVER=$(K config view --minify -o jsonpath='{.clusters[0].cluster.server}')
HOSTPORT=${SERVER#https://}

APPNS=lp-$TARGET-$(date +%s)
K create namespace "$APPNS" > /dev/null
AUDIT_START=$(wc -l < "$AUDIT_LOG")
say "3. the manager in a pod's files and env: ${CMD[*]}"
LOG=$WORK/manager.log
STARTED=$(date +%s)
unshare --mount --propagation private env -i PATH="$PATH" HOME="$WORK" \
  KUBERNETES_SERVICE_HOST="${HOSTPORT%:*}" KUBERNETES_SERVICE_PORT="${HOSTPORT##*:}" POD_NAMESPACE="$NS" \
  SA_DIR="$SA_DIR" bash -c '
    mount -t tmpfs tmpfs /run
    mkdir -p /run/secrets/kubernetes.io/serviceaccount
    mount --bind -o ro "$SA_DIR" /run/secrets/kubernetes.io/serviceaccount
    exec "$@"' manager "${CMD[@]}" > "$LOG" 2>&1 &
PC=$!

# Waits (at most STEP_TIMEOUT seconds, while the manager runs) until `$2` prints `$3`; records a broken behaviour
# named `$1` otherwise.
broken=()
await() {
  local what=$1 cmd=$2 want=$3 got='' by=$(($(date +%s) + STEP_TIMEOUT))
  # without a rule the first broken behaviour is the answer; the later steps (which build on it) would only wait
  [ -z "${REMOVE_RULE:-}" ] || [ "${#broken[@]}" = 0 ] || return 1
  while [ "$(date +%s)" -lt "$by" ]; do
    got=$(eval "$cmd" 2>/dev/null || true)
    [ "$got" = "$want" ] && { say "  ok: $what"; return 0; }
    kill -0 "$PC" 2>/dev/null || break
    sleep 0.5
  done
  say "  BROKEN: $what (got '${got}', want '$want')"
  broken+=("$what")
  return 1
}
APP="webapps.$GROUP"
child() { K -n "$APPNS" get "$CHILD" "a$CHILD_NAME_SUFFIX" -o "jsonpath=$1"; }
if [ "$TARGET" = webapp ]; then
  SPEC='{"image":"registry.example.com/a:1"}'
  REPLICAS_OF_CHILD='{.data.replicas}' STATUS_CHECK='{.status.configMap}/{.status.observedGeneration}'
  status_want() { echo "a-web/$1"; }
else
  SPEC='{"image":"nginx:1.27","replicas":1}'
  REPLICAS_OF_CHILD='{.spec.replicas}' STATUS_CHECK='{.status.observedGeneration}'
  status_want() { echo "$1"; }
fi
say "4. a WebApp, a spec change, its $CHILD deleted (as the admin)"
printf '{"apiVersion":"%s/%s","kind":"WebApp","metadata":{"name":"a","namespace":"%s"},"spec":%s}' \
  "$GROUP" "$VERSION" "$APPNS" "$SPEC" | K create -f - > /dev/null
if [ "$TARGET" = scaffold ]; then
  await "/readyz ok" "curl -s --max-time 2 http://127.0.0.1:$PROBE_PORT/readyz" ok || true
fi
await "$CHILD created for the WebApp" "child '$REPLICAS_OF_CHILD'" 1 || true
await "status written" "K -n $APPNS get $APP a -o jsonpath='$STATUS_CHECK'" "$(status_want 1)" || true
K -n "$APPNS" patch "$APP" a --type merge -p '{"spec":{"replicas":3}}' > /dev/null
await "$CHILD follows a spec change" "child '$REPLICAS_OF_CHILD'" 3 || true
await "status follows a spec change" "K -n $APPNS get $APP a -o jsonpath='$STATUS_CHECK'" "$(status_want 2)" || true
K -n "$APPNS" delete "$CHILD" "a$CHILD_NAME_SUFFIX" --wait=false > /dev/null 2>&1 || true
await "deleted $CHILD put back" "child '{.metadata.name}'" "a$CHILD_NAME_SUFFIX" || true
# an edit by someone else (drift) is put back
if [ "$TARGET" = webapp ]; then DRIFT='{"data":{"replicas":"9"}}'; else DRIFT='{"spec":{"replicas":9}}'; fi
K -n "$APPNS" patch "$CHILD" "a$CHILD_NAME_SUFFIX" --type merge -p "$DRIFT" > /dev/null 2>&1 || true
await "edited $CHILD put back" "child '$REPLICAS_OF_CHILD'" 3 || true
if [ "$TARGET" = webapp ]; then
  await "Event recorded" \
    "K -n $APPNS get events.events.k8s.io -o jsonpath='{range .items[*]}{.reason}{\"\\n\"}{end}' | grep -m1 ConfigMapWritten" \
    ConfigMapWritten || true
  # The put-back after the deletion and the one after the edit are the same Event about the same WebApp (its
  # resourceVersion unchanged): the second occurrence starts a series, which the recorder PATCHes at once.
  await "repeated Event counted as a series" \
    "K -n $APPNS get events.events.k8s.io -o jsonpath='{range .items[*]}{.series.count}{\"\\n\"}{end}' | grep -m1 -x '[2-9]' | head -c1 | sed 's/[2-9]/yes/'" \
    yes || true
fi
holder=$(K -n "$NS" get lease "$LEASE" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true)
# the rest of the run: the Lease is renewed meanwhile
while kill -0 "$PC" 2>/dev/null && [ "$(date +%s)" -lt $((STARTED + SECONDS_TO_RUN)) ]; do sleep 1; done
[ -n "$holder" ] || holder=$(K -n "$NS" get lease "$LEASE" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true)
code=0
if kill -0 "$PC" 2>/dev/null; then
  # SIGTERM, as the kubelet stops a container (unshare, env and bash exec'd into the manager: $PC is its pid)
  kill -TERM "$PC"
  wait "$PC" || code=$?
else
  wait "$PC" || code=$?
fi
say "manager exited $code after $(($(date +%s) - STARTED))s; Lease holder: ${holder:-none}"

say "5. the audit log of this run, requests of $SA_USER"
sleep 2 # the audit backend writes in batches
set +e
tail -n +"$((AUDIT_START + 1))" "$AUDIT_LOG" | python3 -c '
import collections, json, sys
user = sys.argv[1]
by = collections.Counter(); forbidden = []; lists = collections.Counter()
for line in sys.stdin:
    e = json.loads(line)
    if e.get("stage") != "ResponseComplete" or e.get("user", {}).get("username") != user: continue
    r = e.get("objectRef", {}); code = e.get("responseStatus", {}).get("code")
    verb, uri = e.get("verb"), e.get("requestURI")
    key = "%s %s/%s%s" % (verb, r.get("apiGroup") or "core", r.get("resource") or uri, "/" + r["subresource"] if r.get("subresource") else "")
    by[(key, code)] += 1
    if verb == "list" and code == 200: lists["%s/%s" % (r.get("apiGroup") or "core", r.get("resource"))] += 1
    if code == 403: forbidden.append("%s %s" % (verb, uri.split("?")[0]))
for (k, c), n in sorted(by.items()): print(f"  {n:4d} x {k} -> {c}")
print(f"  forbidden: {len(forbidden)}")
for f, n in collections.Counter(forbidden).most_common(5): print(f"    403 x{n} {f}")
for res, n in sorted(lists.items()):
    if n > 2: print(f"  RELIST {res} listed {n} times")
sys.exit(min(len(forbidden), 100))
' "$SA_USER" > "$WORK/audit.txt"
forbidden=$?
set -e
cat "$WORK/audit.txt"
relisted=$(sed -n 's/^  RELIST \(.*\) listed \([0-9]*\) times/\1 listed \2 times/p' "$WORK/audit.txt" | paste -sd, -)
[ -z "$relisted" ] || broken+=("relisted (watch refused?): $relisted")
[ "$code" = 0 ] || broken+=("manager exited $code")
if [ -z "$holder" ] && grep -qE '(create|update) coordination.k8s.io/leases -> 20[01]' "$WORK/audit.txt"; then
  holder="$SA_USER (from the audit log)"
fi
[ -n "$holder" ] || broken+=("no Lease holder")
K -n "$APPNS" delete "$APP" --all --wait=false > /dev/null 2>&1 || true
if [ -n "${REMOVE_RULE:-}" ]; then
  [ "$code" = 0 ] || { echo "  the manager's last log lines:"; tail -3 "$LOG" | cut -c1-400 | sed 's/^/    /'; }
  first=$(grep -m1 '403 x' "$WORK/audit.txt" | sed 's/^ *403 x[0-9]* //' || true)
  what=$(IFS=';'; echo "${broken[*]:-nothing}" | sed 's/;/; /g')
  echo "RESULT $REMOVE_RULE | $forbidden (first: ${first:-none}) | $what"
  [ "$forbidden" -gt 0 ] || fail "without $REMOVE_RULE the ServiceAccount was never refused: the rule is not needed"
  [ "${#broken[@]}" -gt 0 ] || fail "without $REMOVE_RULE nothing broke: the rule is not needed"
  say "PASS: without $REMOVE_RULE: $forbidden refusals, broken: $what"
  exit 0
fi
if [ "$forbidden" != 0 ] || [ "${#broken[@]}" -gt 0 ] || grep -qiE 'forbidden|"code":403' "$LOG"; then
  tail -20 "$LOG"
  fail "$TARGET: $forbidden forbidden; broken: ${broken[*]:-nothing}"
fi
say "PASS: $TARGET did everything (child created, followed, put back; status; Lease held by $holder) with 0 forbidden"
