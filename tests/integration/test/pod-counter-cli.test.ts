import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Pod } from '@kubeloop/client';
import { describe, expect, inject, it } from 'vitest';
import { realCluster } from './support/fault-server.js';
import { podCounterCli as cli, jsonLogRecords, usePodCounterProcesses } from './support/pod-counter-cli.js';
import { podManifest, useLiveCluster, waitFor } from './support.js';

/**
 * How long the --duration run lasts (s): long enough to count twice. A real kube-apiserver answers discovery,
 * the list and the watch far slower than envtest (on a loaded box 3 s passed before the first count).
 */
const DURATION_S = realCluster ? 20 : 3;

/** Metrics and probes on free loopback ports, so parallel runs never fight over :8080/:8081. */
const NO_PORTS = ['--metrics-bind-address', '127.0.0.1:0', '--health-probe-bind-address', '127.0.0.1:0'];

describe('pod-counter CLI (npm run pod-counter -- --kubeconfig <file>)', () => {
  const live = useLiveCluster();
  // Every CLI process a test starts is killed after it, also when the test times out or fails mid-way.
  const { start, run } = usePodCounterProcesses();

  it('counts pods through a kubeconfig file and exits 0 after --duration', async () => {
    expect(existsSync(cli), `${cli} must be built (npm test builds it first)`).toBe(true);
    const { api, ns } = await live.namespace('cli');
    for (const n of ['a', 'b']) await api.create(Pod, podManifest(ns, n));

    const res = await run([
      ...NO_PORTS,
      '--kubeconfig',
      inject('kubeconfigPath'),
      '--namespace',
      ns,
      '--duration',
      String(DURATION_S),
    ]);
    expect(res.code, res.stderr).toBe(0);
    const counts = jsonLogRecords<{ msg: string; count?: number }>(res.stdout)
      .filter((r) => r.msg === 'pod count')
      .map((r) => r.count);
    expect(counts.length).toBeGreaterThanOrEqual(2);
    expect(counts.at(-1)).toBe(2);
    expect(res.stdout).not.toMatch(/bearer|token/i);
  });

  it('stops cleanly on SIGINT (Ctrl-C) and exits 0', async () => {
    const { api, ns } = await live.namespace('cli-int');
    await api.create(Pod, podManifest(ns, 'a'));
    const child = start([...NO_PORTS, '--kubeconfig', inject('kubeconfigPath'), '--namespace', ns]);
    await waitFor(() => child.stdout().includes('"pod count"'), 'the first pod count line');
    child.kill('SIGINT');
    const res = await child.exited;
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('"Manager stopped"');
  });

  const badArguments: Array<[string[], string]> = [
    [
      ['--duration', 'soon'],
      `pod-counter: option '--duration <seconds>' argument 'soon' is invalid. --duration must be a positive number, got "soon" (see pod-counter --help)`,
    ],
    [
      ['--log-level', 'verbose'],
      `pod-counter: option '--log-level <level>' argument 'verbose' is invalid. Allowed choices are trace, debug, info, warn, error. (see pod-counter --help)`,
    ],
    [['--bogus'], `pod-counter: unknown option '--bogus' (see pod-counter --help)`],
    [
      ['--label-selector', 'app in (a'],
      "pod-counter: option '--label-selector <selector>' argument 'app in (a' is invalid. label selector \"app in (a\": ",
    ],
    [
      ['--report-configmap', 'just-a-name'],
      `pod-counter: option '--report-configmap <ns/name>' argument 'just-a-name' is invalid. --report-configmap must be <namespace>/<name>, got "just-a-name" (see pod-counter --help)`,
    ],
    [
      ['--embedded', '--kubeconfig', '/x'],
      'pod-counter: --embedded runs its own API server; do not combine it with --kubeconfig or --context (see pod-counter --help)',
    ],
  ];
  // One test per case, each one process and one wait bounded by its own test timeout. Each run starts node and
  // loads the CLI's module graph (about 0.4 s of CPU); on a starved box that is 10-20 s of wall time per process,
  // so six of them under one test's budget (in a row or at once: they share the same CPU) timed out at load 32.
  it.each(badArguments)('rejects %j with exit code 2 and one line naming the problem', async (args, line) => {
    const res = await run(args);
    expect(res.code, res.stderr).toBe(2);
    const lines = res.stderr.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(line);
  });

  // Like the cases above, one CLI process per test.
  it('fails with exit code 1 and one line for a missing kubeconfig', async () => {
    const missing = await run([...NO_PORTS, '--kubeconfig', '/nonexistent/kubeconfig']);
    expect(missing.code).toBe(1);
    expect(missing.stderr.split('\n').filter(Boolean)).toEqual([
      'pod-counter: /nonexistent/kubeconfig: file not found',
    ]);
  });

  it('fails with exit code 1 and one line for an unreachable server', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pod-counter-cli-'));
    try {
      // Port 1 on loopback: nothing listens there, so the connection is refused at once.
      const file = path.join(dir, 'unreachable.yaml');
      writeFileSync(
        file,
        [
          'apiVersion: v1',
          'kind: Config',
          'current-context: c',
          'contexts: [{ name: c, context: { cluster: k, user: u } }]',
          'clusters: [{ name: k, cluster: { server: "https://127.0.0.1:1", insecure-skip-tls-verify: true } }]',
          'users: [{ name: u, user: { token: do-not-print-me } }]',
          '',
        ].join('\n'),
      );
      const res = await run([...NO_PORTS, '--kubeconfig', file]);
      expect(res.code).toBe(1);
      const lines = res.stderr.split('\n').filter(Boolean);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^pod-counter: cannot reach the API server at https:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/,
      );
      expect(res.stderr + res.stdout).not.toContain('do-not-print-me');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints --help and exits 0', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: pod-counter [options]');
    for (const flag of ['--leader-elect', '--report-configmap', '--metrics-bind-address', '--log-format']) {
      expect(help.stdout).toContain(flag);
    }
  });

  it('prints --version and exits 0', async () => {
    const version = await run(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
