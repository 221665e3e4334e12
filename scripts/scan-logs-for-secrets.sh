#!/usr/bin/env bash
# Scans log files for credentials (not in CI: it reads the logs of runs against a real kube-apiserver and of chaos
# runs, wherever they were written). Fails (exit 1) on any finding; prints where, never the secret itself.
#
# What counts as a finding:
#  - any known secret, given as files whose contents are secrets (--secret-file, e.g. the bearer tokens of a
#    static token file: its first column is taken when the file is a token CSV);
#  - a PEM private key block, an `Authorization: Bearer <value>` or `"bearerToken":"<value>"` with a value, a
#    `password` / `client-key-data` / `token` field with a literal value in YAML or JSON.
#
# Binary files (a NUL in the first 8 KiB) are skipped.
# Usage: scripts/scan-logs-for-secrets.sh [--secret-file F]... LOG_FILE_OR_DIR...
set -euo pipefail
SECRETS=()
PATHS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --secret-file) SECRETS+=("$2"); shift 2 ;;
    *) PATHS+=("$1"); shift ;;
  esac
done
[ ${#PATHS[@]} -gt 0 ] || { echo "usage: $0 [--secret-file F]... LOG_FILE_OR_DIR..." >&2; exit 2; }
exec python3 - "${#SECRETS[@]}" "${SECRETS[@]}" "${PATHS[@]}" <<'PY'
import os, re, sys
n = int(sys.argv[1]); secret_files = sys.argv[2:2 + n]; paths = sys.argv[2 + n:]
secrets = []
for f in secret_files:
    for line in open(f, errors='replace'):
        line = line.strip()
        if not line:
            continue
        # a static token file (token,user,uid,"groups"): the token is the first column
        value = line.split(',')[0] if f.endswith('.csv') else line
        if len(value) >= 12:
            secrets.append(value)
patterns = [
    ('PEM private key', re.compile(r'-----BEGIN [A-Z ]*PRIVATE KEY-----')),
    ('Authorization: Bearer value', re.compile(r'[Aa]uthorization["\']?\s*[:=]\s*["\']?Bearer\s+[A-Za-z0-9._~+/=-]{8,}')),
    ('bearerToken value', re.compile(r'"bearerToken"\s*:\s*"[^"*<\[][^"]{7,}"')),
    ('password value', re.compile(r'"?password"?\s*[:=]\s*"?(?!\*|<|\[|redacted)[^\s",}]{4,}', re.I)),
    ('client-key-data value', re.compile(r'client-key-data"?\s*[:=]\s*"?[A-Za-z0-9+/=]{16,}')),
    ('token field value', re.compile(r'(?<![A-Za-z-])"?token"?\s*[:=]\s*"?[A-Za-z0-9._-]{20,}')),
]
files = []
for p in paths:
    if os.path.isdir(p):
        for root, _, names in os.walk(p):
            files += [os.path.join(root, x) for x in names]
    elif os.path.isfile(p):
        files.append(p)
findings = 0; lines_read = 0; bytes_read = 0
skipped = 0
for f in sorted(files):
    try:
        with open(f, 'rb') as b:
            if b'\0' in b.read(8192):
                skipped += 1; continue  # a binary, not a log
        fh = open(f, errors='replace')
    except OSError as e:
        print(f'unreadable {f}: {e}'); continue
    with fh:
        for i, line in enumerate(fh, 1):
            lines_read += 1; bytes_read += len(line)
            for s in secrets:
                if s in line:
                    findings += 1; print(f'{f}:{i}: a known secret ({len(s)} characters)')
            for what, rx in patterns:
                if rx.search(line):
                    findings += 1; print(f'{f}:{i}: {what}')
print(f'scanned {len(files) - skipped} files ({skipped} binaries skipped), {lines_read} lines, {bytes_read} bytes, {len(secrets)} known secrets: {findings} findings')
sys.exit(1 if findings else 0)
PY
