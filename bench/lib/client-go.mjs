// The client-go contender (bench/client-go/main.go): found, built offline and run from the bench.
//
// It needs Go (BENCH_GO, else /usr/lib/go-1.23/bin/go, else `go` on PATH) and a Kubernetes source tree with
// client-go in staging/ and its dependencies in vendor/ (BENCH_K8S_SRC, else `<kubeconfig's folder>/src/kubernetes`,
// where ../shared/realk8s/build.sh extracts it). Without either, the suites leave the contender out and say why.
// The build overlays main.go into the tree (`go build -overlay`: nothing is written there), with
// GOFLAGS=-mod=vendor and GOPROXY=off, so it never reaches the network; the binary goes to bench/.client-go/
// (git-ignored) and is rebuilt only when main.go or the tree's go.work changes.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const SOURCE = join(here, '..', 'client-go', 'main.go');
const OUT_DIR = join(here, '..', '.client-go');

export const CLIENT_GO = 'client-go-informer';
export const CLIENT_GO_STRIP = 'client-go-informer-strip-managed-fields';
/** client-go with `DisableCompression` (no gzip'd replies), beside kubeloop's `disableCompression`. */
export const CLIENT_GO_NO_GZIP = 'client-go-informer-no-gzip';

/** Go's binary, or null. */
function findGo() {
  const candidates = [process.env.BENCH_GO, '/usr/lib/go-1.23/bin/go'].filter(Boolean);
  for (const c of candidates) if (existsSync(c)) return c;
  for (const dir of (process.env.PATH ?? '').split(':'))
    if (dir && existsSync(join(dir, 'go'))) return join(dir, 'go');
  return null;
}

/** The Kubernetes tree with client-go under staging/, or null. */
function findTree(kubeconfig) {
  const candidates = [
    process.env.BENCH_K8S_SRC,
    kubeconfig ? join(dirname(kubeconfig), 'src', 'kubernetes') : undefined,
  ].filter(Boolean);
  for (const c of candidates)
    if (
      existsSync(join(c, 'staging/src/k8s.io/client-go/informers/factory.go')) &&
      existsSync(join(c, 'vendor'))
    )
      return c;
  return null;
}

/**
 * Whether the client-go contender can be built here: `{ go, tree }`, or `{ reason }` saying what is missing.
 * Cheap (file checks only), so every process of a run takes the same decision.
 */
export function clientGoAvailability(kubeconfig) {
  if (process.env.BENCH_CLIENT_GO === '0') return { reason: 'BENCH_CLIENT_GO=0' };
  const go = findGo();
  if (!go) return { reason: 'no Go toolchain (set BENCH_GO, or install golang-1.23-go)' };
  const tree = findTree(kubeconfig);
  if (!tree)
    return {
      reason: `no Kubernetes tree with staging/src/k8s.io/client-go and vendor/ (set BENCH_K8S_SRC; ../shared/realk8s/build.sh extracts one)`,
    };
  return { go, tree };
}

let warned = false;
/** Says once (stderr) why the client-go contender is left out. */
export function warnNoClientGo(reason) {
  if (warned) return;
  warned = true;
  process.stderr.write(`bench: client-go contender skipped: ${reason}\n`);
}

/** Builds the contender if its binary is missing or stale; returns the binary's path. */
export async function buildClientGo({ go, tree }) {
  const hash = createHash('sha256')
    .update(readFileSync(SOURCE))
    .update(tree)
    .update(existsSync(join(tree, 'go.work')) ? readFileSync(join(tree, 'go.work')) : '')
    .digest('hex')
    .slice(0, 16);
  const bin = join(OUT_DIR, `client-go-informer-${hash}`);
  if (existsSync(bin)) return bin;
  mkdirSync(OUT_DIR, { recursive: true });
  const pkg = 'cmd/kubeloop-bench-client-go';
  const overlay = join(OUT_DIR, 'overlay.json');
  writeFileSync(overlay, JSON.stringify({ Replace: { [join(tree, pkg, 'main.go')]: SOURCE } }));
  // the tree's own build cache (build.sh's GOCACHE) holds client-go compiled with these flags already
  const cache = join(dirname(tree), 'gocache');
  const env = {
    ...process.env,
    GOFLAGS: '-mod=vendor',
    GOTOOLCHAIN: 'local',
    GOPROXY: 'off',
    GOSUMDB: 'off',
    CGO_ENABLED: '0',
    ...(existsSync(cache) && !process.env.GOCACHE ? { GOCACHE: cache } : {}),
  };
  const t0 = performance.now();
  process.stderr.write(`bench: building the client-go contender against ${tree} …\n`);
  await run(go, ['build', '-trimpath', '-overlay', overlay, '-o', bin, `./${pkg}`], {
    cwd: tree,
    env,
    maxBuffer: 1 << 24,
  });
  process.stderr.write(`bench: built ${bin} in ${Math.round((performance.now() - t0) / 1000)} s\n`);
  return bin;
}

/**
 * Runs the contender: `args` are main.go's flags. Each JSON line it prints goes to `onLine`; resolves with
 * the last one when it exits 0, rejects with its stderr otherwise.
 */
export function runClientGo(bin, args, onLine = () => {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let last;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      out += d;
      let nl = out.indexOf('\n');
      while (nl >= 0) {
        const line = out.slice(0, nl).trim();
        out = out.slice(nl + 1);
        if (line.startsWith('{')) {
          last = JSON.parse(line);
          onLine(last);
        }
        nl = out.indexOf('\n');
      }
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0 && last) resolve(last);
      else reject(new Error(`client-go contender exited ${code}: ${err.slice(-2000)}`));
    });
  });
}
