#!/usr/bin/env bash
# Least privilege of pod-counter on a real kube-apiserver with RBAC (not in CI: it needs a real kube-apiserver
# started with AUTHZ=RBAC and an audit log; docs/compatibility.md says how it is built and started).
#
# What it does, as a cluster would:
#  1. applies apps/pod-counter/deploy (kustomize) as the admin: the Namespace, the ServiceAccount, the RBAC, the
#     Deployment (nothing runs it: this server has no controller-manager or kubelet) and the Service;
#  2. asks the TokenRequest API for a token of the pod-counter ServiceAccount (`kubectl create token`);
#  3. lays out the files the kubelet mounts at /var/run/secrets/kubernetes.io/serviceaccount (token, ca.crt,
#     namespace) in a private mount namespace (the host's /run is never touched), and sets the env a pod gets
#     (KUBERNETES_SERVICE_HOST/PORT, POD_NAMESPACE from the Deployment's fieldRef);
#  4. runs the built pod-counter (apps/pod-counter/dist/cli.js) with the Deployment's container args, as read back
#     from the server, except that the metrics and probe ports are free local ports (the box is shared);
#  5. creates and deletes pods as the admin meanwhile, then checks: the report ConfigMap has the right total,
#     the Lease is held by the replica, /readyz answered ok, and the audit log has 0 answers 403 to the
#     ServiceAccount (any 403 fails the run, as does any request the audit log shows for another user name).
#
# Usage: KUBECONFIG=<admin kubeconfig of the RBAC server> AUDIT_LOG=<its --audit-log-path> \
#          [REMOVE_RULE=<group>/<resource>/<verb>] [READY_TIMEOUT=180] scripts/realk8s-least-privilege.sh [seconds, default 20]
# REMOVE_RULE (core group: empty, e.g. /pods/watch) takes that one verb out of the applied RBAC: the run must then
# be refused (at least one 403) and break a named behaviour; it prints `RESULT <rule> | <403s> | <what broke>`
# and exits 0 when both happened (scripts/realk8s-rule-removal.sh runs every rule this way).
# Needs root (unshare --mount), kubectl, node, jq-free (python3 reads the audit log), a built pod-counter.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_TO_RUN=${1:-20}
: "${KUBECONFIG:?set KUBECONFIG to the admin kubeconfig of the RBAC server}"
: "${AUDIT_LOG:?set AUDIT_LOG to the --audit-log-path of that server}"
CLI=$ROOT/apps/pod-counter/dist/cli.js
[ -f "$CLI" ] || { echo "build pod-counter first (npm run build:all)" >&2; exit 2; }
NS=pod-counter SA=pod-counter
SA_USER=system:serviceaccount:$NS:$SA
K() { kubectl --kubeconfig "$KUBECONFIG" "$@"; }
WORK=$(mktemp -d /tmp/kubeloop-least-privilege-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
say() { echo "[$(date -u +%T)] $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# An RBAC server: the ServiceAccount must be refused before its rules exist. (AlwaysAllow would prove nothing.)
say "server $(K get --raw /version | python3 -c 'import json,sys; print(json.load(sys.stdin)["gitVersion"])')"

say "1. apply apps/pod-counter/deploy"
# A fresh start without deleting the namespace (this server has no namespace controller: it would stay
# Terminating): the RBAC, the report and the Lease of an earlier run go.
K delete clusterrole,clusterrolebinding pod-counter --ignore-not-found >/dev/null
if K get namespace "$NS" >/dev/null 2>&1; then
  K -n "$NS" delete role,rolebinding --all --ignore-not-found >/dev/null
  K -n "$NS" delete configmap pod-counts --ignore-not-found >/dev/null
  K -n "$NS" delete lease pod-counter --ignore-not-found >/dev/null
fi
[ "$(K auth can-i list pods --as "$SA_USER" -A 2>/dev/null || true)" = no ] ||
  fail "the server lets $SA_USER list pods before its RBAC exists: start it with AUTHZ=RBAC"
K apply -k "$ROOT/apps/pod-counter/deploy" >/dev/null
if [ -n "${REMOVE_RULE:-}" ]; then
  # every Role and ClusterRole the manifests declare loses that verb where group and resource match
  for obj in clusterrole/pod-counter $(K -n "$NS" get role -o name); do
    ns_flag=(); case "$obj" in clusterrole/*) ;; *) ns_flag=(-n "$NS") ;; esac
    K "${ns_flag[@]}" get "$obj" -o json | python3 -c '
import json, sys
group, resource, verb = sys.argv[1].split("/")
o = json.load(sys.stdin)
rules = []
for r in o.get("rules", []):
    if group in r.get("apiGroups", []) and resource in r.get("resources", []) and verb in r.get("verbs", []):
        r["verbs"] = [v for v in r["verbs"] if v != verb]
    if r["verbs"]: rules.append(r)
o["rules"] = rules
json.dump(o, sys.stdout)' "$REMOVE_RULE" | K replace -f - >/dev/null
  done
  say "rule removed: $REMOVE_RULE"
fi
ARGS=$(K -n "$NS" get deployment pod-counter -o jsonpath='{range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}')
say "Deployment args: $(echo "$ARGS" | tr '\n' ' ')"

say "2. TokenRequest for serviceaccount/$SA"
SA_DIR=$WORK/serviceaccount
mkdir -p "$SA_DIR"
K -n "$NS" create token "$SA" --duration=1h > "$SA_DIR/token"
K config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d > "$SA_DIR/ca.crt"
printf '%s' "$NS" > "$SA_DIR/namespace"
SERVER=$(K config view --minify -o jsonpath='{.clusters[0].cluster.server}')
HOSTPORT=${SERVER#https://}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
METRICS_PORT=$(free_port) PROBE_PORT=$(free_port)
RUN_ARGS=()
while IFS= read -r a; do
  case "$a" in
    --metrics-bind-address=*) RUN_ARGS+=("--metrics-bind-address=127.0.0.1:$METRICS_PORT") ;;
    --health-probe-bind-address=*) RUN_ARGS+=("--health-probe-bind-address=127.0.0.1:$PROBE_PORT") ;;
    '') ;;
    *) RUN_ARGS+=("$a") ;;
  esac
done <<< "$ARGS"

say "3. pods to count (as the admin)"
RUN_ID=$(date +%s)
A=lp-a-$RUN_ID B=lp-b-$RUN_ID
K create namespace "$A" >/dev/null && K create namespace "$B" >/dev/null
for i in 1 2 3; do K -n "$A" run "p$i" --image=registry.invalid/none --restart=Never >/dev/null; done
K -n "$B" run q1 --image=registry.invalid/none --restart=Never >/dev/null
AUDIT_START=$(wc -l < "$AUDIT_LOG")

say "4. pod-counter in a pod's files and env for ${SECONDS_TO_RUN}s: ${RUN_ARGS[*]}"
LOG=$WORK/pod-counter.log
unshare --mount --propagation private env -i PATH="$PATH" HOME="$WORK" \
  KUBERNETES_SERVICE_HOST="${HOSTPORT%:*}" KUBERNETES_SERVICE_PORT="${HOSTPORT##*:}" POD_NAMESPACE="$NS" \
  SA_DIR="$SA_DIR" CLI="$CLI" DURATION="$SECONDS_TO_RUN" bash -c '
    mount -t tmpfs tmpfs /run
    mkdir -p /run/secrets/kubernetes.io/serviceaccount
    mount --bind -o ro "$SA_DIR" /run/secrets/kubernetes.io/serviceaccount
    exec node "$CLI" --duration "$DURATION" "$@"' pod-counter "${RUN_ARGS[@]}" > "$LOG" 2>&1 &
PC=$!
ready=no
# Time-based, not a count of tries: on a starved box pod-counter's start alone can take a minute.
ready_by=$(($(date +%s) + ${READY_TIMEOUT:-180}))
while [ "$(date +%s)" -lt "$ready_by" ]; do
  if [ "$(curl -s --max-time 2 "http://127.0.0.1:$PROBE_PORT/readyz" || true)" = ok ]; then ready=yes; break; fi
  kill -0 "$PC" 2>/dev/null || break
  sleep 0.3
done
say "readyz: $ready"
K -n "$B" run q2 --image=registry.invalid/none --restart=Never >/dev/null
K -n "$A" delete pod p1 --grace-period=0 --force >/dev/null 2>&1
want=$(K get pods -A --no-headers | wc -l)
got='' holder=''
# The holder is read while pod-counter runs: it releases the Lease when it stops (releaseOnCancel), and on a
# loaded box the run can end before a later read.
for _ in $(seq 100); do
  [ -n "$holder" ] || holder=$(K -n "$NS" get lease pod-counter -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true)
  got=$(K -n "$NS" get configmap pod-counts -o jsonpath='{.data.total}' 2>/dev/null || true)
  [ "$got" = "$want" ] && [ -n "$holder" ] && break
  kill -0 "$PC" 2>/dev/null || break
  sleep 0.3
done
metrics=$(curl -s --max-time 2 "http://127.0.0.1:$METRICS_PORT/metrics" | grep -c '^pod_counter\|^controller_runtime_reconcile_total' || true)
code=0; wait "$PC" || code=$?
say "pod-counter exited $code; report total=$got (want $want); lease holder=${holder:-none}; metric lines=$metrics"

say "5. the audit log of this run, requests of $SA_USER"
sleep 2 # the audit backend writes in batches
set +e
tail -n +"$((AUDIT_START + 1))" "$AUDIT_LOG" | python3 -c '
import collections, json, sys
user = sys.argv[1]
by = collections.Counter(); forbidden = []
for line in sys.stdin:
    e = json.loads(line)
    if e.get("stage") != "ResponseComplete" or e.get("user", {}).get("username") != user: continue
    r = e.get("objectRef", {}); code = e.get("responseStatus", {}).get("code")
    verb, uri = e.get("verb"), e.get("requestURI")
    key = "%s %s/%s" % (verb, r.get("apiGroup") or "core", r.get("resource") or uri)
    by[(key, code)] += 1
    if code == 403: forbidden.append("%s %s" % (verb, uri.split("?")[0]))
for (k, c), n in sorted(by.items()): print(f"  {n:4d} x {k} -> {c}")
print(f"  forbidden: {len(forbidden)}")
for f, n in collections.Counter(forbidden).most_common(5): print(f"    403 x{n} {f}")
sys.exit(min(len(forbidden), 100))
' "$SA_USER" > "$WORK/audit.txt"
forbidden=$?
set -e
cat "$WORK/audit.txt"
logged_refusal=no
grep -qiE 'forbidden|"code":403|HTTP 403' "$LOG" && logged_refusal=yes
broken=()
[ "$code" = 0 ] || broken+=("pod-counter exited $code")
[ "$ready" = yes ] || broken+=("/readyz never ok")
[ "$got" = "$want" ] || broken+=("report total ${got:-absent}, want $want")
# The Lease was held if the server took a create or renew of it from the ServiceAccount (the holder read above can
# miss it on a loaded box: pod-counter releases the Lease when it stops).
if [ -z "$holder" ] && grep -qE '(create|update) coordination.k8s.io/leases -> 20[01]' "$WORK/audit.txt"; then
  holder="$SA_USER (from the audit log)"
fi
[ -n "$holder" ] || broken+=("no Lease holder")
# (the pods' namespaces stay: without a namespace controller a deleted namespace stays Terminating)
K -n "$A" delete pods --all --grace-period=0 --force >/dev/null 2>&1
K -n "$B" delete pods --all --grace-period=0 --force >/dev/null 2>&1
if [ -n "${REMOVE_RULE:-}" ]; then
  first=$(grep -m1 '403 x' "$WORK/audit.txt" | sed 's/^ *403 x[0-9]* //' || true)
  what=$(IFS=';'; echo "${broken[*]:-nothing}" | sed 's/;/; /g')
  echo "RESULT $REMOVE_RULE | $forbidden (first: ${first:-none}) | $what"
  [ "$forbidden" -gt 0 ] || fail "without $REMOVE_RULE the ServiceAccount was never refused: the rule is not needed"
  [ "${#broken[@]}" -gt 0 ] || fail "without $REMOVE_RULE nothing broke: the rule is not needed"
  say "PASS: without $REMOVE_RULE: $forbidden refusals, broken: $what"
  exit 0
fi
[ "$forbidden" = 0 ] || fail "the ServiceAccount was refused (403) $forbidden times"
[ "$logged_refusal" = no ] || { grep -iE 'forbidden|"code":403|HTTP 403' "$LOG" | head -5; fail "pod-counter logged a refusal"; }
[ "$code" = 0 ] || { tail -20 "$LOG"; fail "pod-counter exited $code"; }
[ "$ready" = yes ] || fail "/readyz never answered ok"
[ "$got" = "$want" ] || fail "report total $got, want $want"
[ -n "$holder" ] || fail "no Lease holder"
say "PASS: counts followed (total $got), report written, Lease held by $holder, /readyz ok, 0 forbidden"
