/**
 * Table-driven conformance of kubeconfig loading against client-go's rules (tools/clientcmd) and
 * controller-runtime's loading order: each case writes real files into its own folder, loads them, and
 * asserts the whole resulting RestConfig or the exact error.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  KubeconfigError,
  type LoadRestConfigOptions,
  loadRestConfig,
  type RestConfig,
} from '../src/index.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeloop-kubeconfig-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const UA = 'conformance/v1 (test/test) kubeloop/0.1.0';
// A real self-signed CA (P-256, CN=kubeloop-test-ca): the loader parses CA bundles as X.509.
const CA_PEM = `-----BEGIN CERTIFICATE-----
MIIBjDCCATOgAwIBAgIUVhGjn8Kv/QjkFKNiSUAPHnoqIuAwCgYIKoZIzj0EAwIw
GzEZMBcGA1UEAwwQa3ViZWxvb3AtdGVzdC1jYTAgFw0yNjExMzAxOTMxNDVaGA8y
MTI2MTEwNjE5MzE0NVowGzEZMBcGA1UEAwwQa3ViZWxvb3AtdGVzdC1jYTBZMBMG
ByqGSM49AgEGCCqGSM49AwEHA0IABKxgR12fsd+tBCmuK8O0hXZum9PsSz+MSczz
UM34KAzEp5VBunpRJH0X5diwLkZeFybcJzXYly4WbgLUzIT4nYyjUzBRMB0GA1Ud
DgQWBBREW+frG4JsUmKwOEypz6e5qMj8ojAfBgNVHSMEGDAWgBREW+frG4JsUmKw
OEypz6e5qMj8ojAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0cAMEQCIEm8
vsowJoKFy8Sf2wQWXCwcTYjHwxLrqQuWhpU+s+lQAiBLCvYdocoHMLbWGw96mSzC
5900t2+bZUQ7ykeAVR0L9g==
-----END CERTIFICATE-----
`;
const CERT_PEM = '-----BEGIN CERTIFICATE-----\nQ0xJRU5UIENFUlQ=\n-----END CERTIFICATE-----\n';
const KEY_PEM = '-----BEGIN PRIVATE KEY-----\nS0VZ\n-----END PRIVATE KEY-----\n';
const b64 = (s: string) => Buffer.from(s).toString('base64');

type Expected = Partial<RestConfig> & { tlsClientConfig?: RestConfig['tlsClientConfig'] };

interface Case {
  readonly name: string;
  /** Files relative to the case folder; `{dir}` in a text is replaced by the folder. */
  readonly files?: Record<string, string>;
  /** Files (relative) to make executable. */
  readonly executables?: readonly string[];
  /** Load options (env defaults to {} so the real environment never leaks in). */
  readonly options: (dir: string) => LoadRestConfigOptions;
  /** The whole expected RestConfig minus the defaults (qps 20, burst 30, timeout 0, UA), or the exact error. */
  readonly want:
    | { readonly config: (dir: string) => Expected }
    | { readonly error: (dir: string) => { readonly code: string; readonly message: string } };
  /** Exact warnings emitted. Default none. */
  readonly warnings?: (dir: string) => string[];
}

const kc = (body: string) => `apiVersion: v1\nkind: Config\n${body}`;
const simple = (server: string, user = '{}', extra = '') =>
  kc(`current-context: c
clusters: [{name: k, cluster: {server: "${server}"${extra}}}]
users: [{name: u, user: ${user}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
`);

const cases: Case[] = [
  {
    name: 'explicit file with a static token',
    files: { 'config.yaml': simple('https://1.2.3.4:6443', '{token: abc}') },
    options: (d) => ({ kubeconfig: `${d}/config.yaml` }),
    want: { config: () => ({ host: 'https://1.2.3.4:6443', tlsClientConfig: {}, bearerToken: 'abc' }) },
  },
  {
    name: 'C14: KUBECONFIG=a:missing::b — first file wins a named cluster whole, current-context from a',
    files: {
      'a.yaml': kc(`current-context: ctx-a
clusters: [{name: kind, cluster: {server: "https://a.example:6443"}}]
users: [{name: ua, user: {token: ta}}]
contexts: [{name: ctx-a, context: {cluster: kind, user: ua}}]
`),
      'b.yaml': kc(`current-context: ctx-b
clusters: [{name: kind, cluster: {server: "https://b.example:6443", insecure-skip-tls-verify: true, proxy-url: "http://p:3128"}}]
users: [{name: ub, user: {token: tb}}]
contexts: [{name: ctx-b, context: {cluster: kind, user: ub}}]
`),
    },
    options: (d) => ({ env: { KUBECONFIG: `${d}/a.yaml:${d}/missing.yaml::${d}/b.yaml` } }),
    want: { config: () => ({ host: 'https://a.example:6443', tlsClientConfig: {}, bearerToken: 'ta' }) },
  },
  {
    name: 'C14: a context from the second file still sees the first file’s cluster of the same name',
    files: {
      'a.yaml': kc(`current-context: ctx-a
clusters: [{name: kind, cluster: {server: "https://a.example:6443"}}]
contexts: [{name: ctx-a, context: {cluster: kind}}]
`),
      'b.yaml': kc(`clusters: [{name: kind, cluster: {server: "https://b.example:6443"}}]
users: [{name: ub, user: {token: tb}}]
contexts: [{name: ctx-b, context: {cluster: kind, user: ub}}]
`),
    },
    options: (d) => ({ env: { KUBECONFIG: `${d}/a.yaml:${d}/b.yaml` }, context: 'ctx-b' }),
    want: { config: () => ({ host: 'https://a.example:6443', tlsClientConfig: {}, bearerToken: 'tb' }) },
  },
  {
    name: 'current-context comes from the first file that sets one',
    files: {
      'a.yaml': kc(`clusters: [{name: a, cluster: {server: "https://a:1"}}]
contexts: [{name: ctx-a, context: {cluster: a}}]
`),
      'b.yaml': kc(`current-context: ctx-b
clusters: [{name: b, cluster: {server: "https://b:2"}}]
contexts: [{name: ctx-b, context: {cluster: b}}]
`),
      'c.yaml': kc(`current-context: ctx-a
`),
    },
    options: (d) => ({ env: { KUBECONFIG: `${d}/a.yaml:${d}/b.yaml:${d}/c.yaml` } }),
    want: { config: () => ({ host: 'https://b:2', tlsClientConfig: {} }) },
  },
  {
    name: 'a user defined twice: the first definition wins whole (no field merge)',
    files: {
      'a.yaml': simple('https://a:1', '{token: first}'),
      'b.yaml': kc(`users: [{name: u, user: {username: bob, password: pw}}]
`),
    },
    options: (d) => ({ env: { KUBECONFIG: `${d}/a.yaml:${d}/b.yaml` } }),
    want: { config: () => ({ host: 'https://a:1', tlsClientConfig: {}, bearerToken: 'first' }) },
  },
  {
    name: 'duplicate and empty KUBECONFIG entries are ignored',
    files: { 'a.yaml': simple('https://a:1') },
    options: (d) => ({ env: { KUBECONFIG: `::${d}/a.yaml:${d}/a.yaml:` } }),
    want: { config: () => ({ host: 'https://a:1', tlsClientConfig: {} }) },
  },
  {
    name: 'an empty file in the KUBECONFIG list is an empty config, not an error',
    files: { 'empty.yaml': '', 'a.yaml': simple('https://a:1') },
    options: (d) => ({ env: { KUBECONFIG: `${d}/empty.yaml:${d}/a.yaml` } }),
    want: { config: () => ({ host: 'https://a:1', tlsClientConfig: {} }) },
  },
  {
    name: 'all KUBECONFIG files missing and not in a cluster: no configuration',
    options: (d) => ({ env: { KUBECONFIG: `${d}/x.yaml:${d}/y.yaml` } }),
    want: {
      error: (d) => ({
        code: 'NoConfiguration',
        message: `no configuration found in KUBECONFIG (${d}/x.yaml, ${d}/y.yaml)`,
      }),
    },
  },
  {
    name: 'a missing explicit --kubeconfig is an error (no fallback)',
    files: { 'home/.kube/config': simple('https://home:1') },
    options: (d) => ({ argv: ['node', 'app', `--kubeconfig=${d}/nope.yaml`], homeDir: `${d}/home` }),
    want: { error: (d) => ({ code: 'FileNotFound', message: `${d}/nope.yaml: file not found` }) },
  },
  {
    name: 'the --kubeconfig flag wins over KUBECONFIG',
    files: { 'flag.yaml': simple('https://flag:1'), 'env.yaml': simple('https://env:1') },
    options: (d) => ({
      argv: ['node', 'app', '--kubeconfig', `${d}/flag.yaml`],
      env: { KUBECONFIG: `${d}/env.yaml` },
    }),
    want: { config: () => ({ host: 'https://flag:1', tlsClientConfig: {} }) },
  },
  {
    name: 'invalid YAML is an error naming the file, line and yaml error code — never a parser stack nor the file text',
    files: { 'bad.yaml': 'clusters: [\n  - name: x\n  bad: : :\n' },
    options: (d) => ({ kubeconfig: `${d}/bad.yaml` }),
    want: {
      error: (d) => ({
        code: 'InvalidYaml',
        message: `${d}/bad.yaml: not valid YAML at line 2, column 11: BLOCK_AS_IMPLICIT_KEY`,
      }),
    },
  },
  {
    name: 'relative CA, client cert and key resolve against the kubeconfig’s folder',
    files: {
      'nested/dir/config': simple(
        'https://a:1',
        '{client-certificate: pki/client.crt, client-key: pki/client.key}',
        ', certificate-authority: pki/ca.crt',
      ),
      'nested/dir/pki/ca.crt': CA_PEM,
      'nested/dir/pki/client.crt': CERT_PEM,
      'nested/dir/pki/client.key': KEY_PEM,
    },
    options: (d) => ({ env: { KUBECONFIG: `${d}/nested/dir/config` } }),
    want: {
      config: (d) => ({
        host: 'https://a:1',
        tlsClientConfig: {
          caData: CA_PEM,
          caFile: `${d}/nested/dir/pki/ca.crt`,
          certData: CERT_PEM,
          keyData: KEY_PEM,
          certFile: `${d}/nested/dir/pki/client.crt`,
          keyFile: `${d}/nested/dir/pki/client.key`,
        },
      }),
    },
  },
  {
    name: 'a relative tokenFile resolves against the kubeconfig’s folder',
    files: {
      'sub/config': simple('https://a:1', '{tokenFile: secrets/token}'),
      'sub/secrets/token': 'tok\n',
    },
    options: (d) => ({ kubeconfig: `${d}/sub/config` }),
    want: {
      config: (d) => ({
        host: 'https://a:1',
        tlsClientConfig: {},
        bearerTokenFile: `${d}/sub/secrets/token`,
      }),
    },
  },
  {
    name: 'a relative exec command with a path separator resolves against the kubeconfig’s folder',
    files: {
      'sub/config': simple(
        'https://a:1',
        '{exec: {apiVersion: client.authentication.k8s.io/v1, command: ./bin/plugin, interactiveMode: Never}}',
      ),
      'sub/bin/plugin': '#!/bin/sh\n',
    },
    executables: ['sub/bin/plugin'],
    options: (d) => ({ kubeconfig: `${d}/sub/config` }),
    want: {
      config: (d) => ({
        host: 'https://a:1',
        tlsClientConfig: {},
        execProvider: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: `${d}/sub/bin/plugin`,
          interactiveMode: 'Never',
        },
      }),
    },
  },
  {
    name: 'an exec command without a separator is looked up on PATH, kept as given, and resolved to the binary found',
    files: {
      config: simple(
        'https://a:1',
        `{exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: my-plugin, args: [get-token, --x], env: [{name: A, value: "1"}], provideClusterInfo: true, installHint: "install it"}}`,
        ', extensions: [{name: client.authentication.k8s.io/exec, extension: {audience: test}}]',
      ),
      'bin/my-plugin': '#!/bin/sh\n',
    },
    executables: ['bin/my-plugin'],
    options: (d) => ({ kubeconfig: `${d}/config`, env: { PATH: `${d}/bin` } }),
    want: {
      config: (d) => ({
        host: 'https://a:1',
        tlsClientConfig: {},
        execProvider: {
          apiVersion: 'client.authentication.k8s.io/v1beta1',
          command: 'my-plugin',
          resolvedCommand: `${d}/bin/my-plugin`,
          args: ['get-token', '--x'],
          env: [{ name: 'A', value: '1' }],
          interactiveMode: 'IfAvailable',
          provideClusterInfo: true,
          installHint: 'install it',
          clusterConfig: { audience: 'test' },
        },
      }),
    },
  },
  {
    name: 'an exec command not on PATH names the user and field',
    files: {
      config: kc(`current-context: c
clusters: [{name: k, cluster: {server: "https://a:1"}}]
users: [{name: dev, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: no-such-plugin, interactiveMode: Never}}}]
contexts: [{name: c, context: {cluster: k, user: dev}}]
`),
    },
    options: (d) => ({ kubeconfig: `${d}/config`, env: { PATH: `${d}/nowhere` } }),
    want: {
      error: (d) => ({
        code: 'InvalidEntry',
        message: `${d}/config: users[dev].exec.command: not found on PATH`,
      }),
    },
  },
  {
    name: 'an exec command not found says the installHint (client-go prints it when the plugin is missing)',
    files: {
      config: kc(`current-context: c
clusters: [{name: k, cluster: {server: "https://a:1"}}]
users: [{name: dev, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: gke-gcloud-auth-plugin, interactiveMode: Never, installHint: "Install gke-gcloud-auth-plugin: gcloud components install gke-gcloud-auth-plugin"}}}]
contexts: [{name: c, context: {cluster: k, user: dev}}]
`),
    },
    options: (d) => ({ kubeconfig: `${d}/config`, env: { PATH: `${d}/nowhere` } }),
    want: {
      error: (d) => ({
        code: 'InvalidEntry',
        message: `${d}/config: users[dev].exec.command: not found on PATH; Install gke-gcloud-auth-plugin: gcloud components install gke-gcloud-auth-plugin`,
      }),
    },
  },
  {
    name: 'exec v1 without interactiveMode is an error',
    files: {
      config: simple(
        'https://a:1',
        '{exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}}',
      ),
    },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      error: (d) => ({
        code: 'InvalidEntry',
        message: `${d}/config: users[u].exec.interactiveMode: must be specified for apiVersion v1 (Never, IfAvailable or Always)`,
      }),
    },
  },
  {
    name: 'exec with the removed v1alpha1 API is an error',
    files: {
      config: simple(
        'https://a:1',
        '{exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: /bin/sh}}',
      ),
    },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      error: (d) => ({
        code: 'InvalidEntry',
        message: `${d}/config: users[u].exec.apiVersion: unsupported "client.authentication.k8s.io/v1alpha1", must be client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1`,
      }),
    },
  },
  {
    name: 'C15: no current-context, an explicit context works',
    files: {
      config: kc(`clusters: [{name: k, cluster: {server: "https://a:1"}}]
contexts: [{name: one, context: {cluster: k}}]
`),
    },
    options: (d) => ({ kubeconfig: `${d}/config`, context: 'one' }),
    want: { config: () => ({ host: 'https://a:1', tlsClientConfig: {} }) },
  },
  {
    name: 'C15: no current-context and no context asked for is a clear error',
    files: {
      config: kc(`clusters: [{name: k, cluster: {server: "https://a:1"}}]
contexts: [{name: one, context: {cluster: k}}]
`),
    },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      error: (d) => ({
        code: 'NoCurrentContext',
        message: `${d}/config: no current context is set; pass a context to use`,
      }),
    },
  },
  {
    name: 'C15: an empty current-context is the same as none',
    files: {
      config: kc(`current-context: ""
clusters: [{name: k, cluster: {server: "https://a:1"}}]
contexts: [{name: one, context: {cluster: k}}]
`),
    },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      error: (d) => ({
        code: 'NoCurrentContext',
        message: `${d}/config: no current context is set; pass a context to use`,
      }),
    },
  },
  {
    name: 'the --context flag overrides current-context',
    files: {
      config: kc(`current-context: one
clusters: [{name: k1, cluster: {server: "https://one:1"}}, {name: k2, cluster: {server: "https://two:2"}}]
contexts: [{name: one, context: {cluster: k1}}, {name: two, context: {cluster: k2}}]
`),
    },
    options: (d) => ({ kubeconfig: `${d}/config`, argv: ['node', 'app', '--context', 'two'] }),
    want: { config: () => ({ host: 'https://two:2', tlsClientConfig: {} }) },
  },
  {
    name: 'an unknown context is an error',
    files: { config: simple('https://a:1') },
    options: (d) => ({ kubeconfig: `${d}/config`, context: 'ghost' }),
    want: { error: (d) => ({ code: 'ContextNotFound', message: `${d}/config: context "ghost" not found` }) },
  },
  {
    name: 'a context naming a missing cluster is an error',
    files: { config: kc(`current-context: c\ncontexts: [{name: c, context: {cluster: gone}}]\n`) },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      error: (d) => ({
        code: 'ClusterNotFound',
        message: `${d}/config: contexts[c].cluster: cluster "gone" not found`,
      }),
    },
  },
  {
    name: 'a context naming a missing user is an error',
    files: {
      config: kc(`current-context: c
clusters: [{name: k, cluster: {server: "https://a:1"}}]
contexts: [{name: c, context: {cluster: k, user: ghost}}]
`),
    },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      error: (d) => ({
        code: 'UserNotFound',
        message: `${d}/config: contexts[c].user: user "ghost" not found`,
      }),
    },
  },
  {
    name: 'an empty user entry means no credentials',
    files: { config: simple('https://a:1', 'null') },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: { config: () => ({ host: 'https://a:1', tlsClientConfig: {} }) },
  },
  {
    name: 'a cluster entry without a name is an error naming its index',
    files: { config: kc(`clusters: [{cluster: {server: "https://a:1"}}]\n`) },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      error: (d) => ({ code: 'InvalidEntry', message: `${d}/config: clusters[0].name: missing name` }),
    },
  },
  {
    name: 'a cluster without a server is an error',
    files: {
      config: kc(`current-context: c
clusters: [{name: k, cluster: {}}]
contexts: [{name: c, context: {cluster: k}}]
`),
    },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      error: (d) => ({
        code: 'InvalidServer',
        message: `${d}/config: clusters[k].server: no server defined`,
      }),
    },
  },
  {
    name: 'a server path prefix is kept; query, fragment and trailing slash are dropped',
    files: { config: simple('https://a:1/k8s/clusters/c-1/?x=1#f') },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: { config: () => ({ host: 'https://a:1/k8s/clusters/c-1', tlsClientConfig: {} }) },
  },
  {
    name: 'basic auth',
    files: { config: simple('https://a:1', '{username: admin, password: s3cret}') },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      config: () => ({ host: 'https://a:1', tlsClientConfig: {}, username: 'admin', password: 's3cret' }),
    },
  },
  {
    name: 'basic auth together with a token is an error',
    files: { config: simple('https://a:1', '{username: admin, password: pw, token: t}') },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      error: (d) => ({
        code: 'ConflictingFields',
        message: `${d}/config: users[u]: username/password or bearer token may be set, but not both`,
      }),
    },
  },
  {
    name: 'token and tokenFile together: both kept (the file is re-read, the token is the fallback)',
    files: { config: simple('https://a:1', '{token: t, tokenFile: /var/token}') },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      config: () => ({
        host: 'https://a:1',
        tlsClientConfig: {},
        bearerToken: 't',
        bearerTokenFile: '/var/token',
      }),
    },
  },
  {
    name: 'client certificate and key as inline data; CA as inline data',
    files: {
      config: simple(
        'https://a:1',
        `{client-certificate-data: ${b64(CERT_PEM)}, client-key-data: ${b64(KEY_PEM)}}`,
        `, certificate-authority-data: ${b64(CA_PEM)}`,
      ),
    },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      config: () => ({
        host: 'https://a:1',
        tlsClientConfig: { caData: CA_PEM, certData: CERT_PEM, keyData: KEY_PEM },
      }),
    },
  },
  {
    name: 'a client certificate without its key is an error',
    files: { config: simple('https://a:1', `{client-certificate-data: ${b64(CERT_PEM)}}`) },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      error: (d) => ({
        code: 'InvalidEntry',
        message: `${d}/config: users[u].client-key: client-key-data or client-key must be given with a client certificate`,
      }),
    },
  },
  {
    name: 'a missing CA file names the cluster field and the path',
    files: { config: simple('https://a:1', '{}', ', certificate-authority: missing-ca.crt') },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      error: (d) => ({
        code: 'FileNotFound',
        message: `${d}/config: clusters[k].certificate-authority: cannot read ${d}/missing-ca.crt (ENOENT)`,
      }),
    },
  },
  {
    name: 'tls-server-name',
    files: {
      config: simple(
        'https://127.0.0.1:6443',
        '{}',
        `, certificate-authority-data: ${b64(CA_PEM)}, tls-server-name: api.internal`,
      ),
    },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      config: () => ({
        host: 'https://127.0.0.1:6443',
        tlsClientConfig: { caData: CA_PEM, serverName: 'api.internal' },
      }),
    },
  },
  {
    name: 'insecure-skip-tls-verify alone',
    files: { config: simple('https://a:1', '{}', ', insecure-skip-tls-verify: true') },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: { config: () => ({ host: 'https://a:1', tlsClientConfig: { insecure: true } }) },
  },
  {
    name: 'YAML 1.1 as kubectl reads it (sigs.k8s.io/yaml): yes/on are booleans, merge keys work, timestamps and 1:20 stay text',
    files: {
      config: kc(`current-context: c
clusters: [{name: k, cluster: {server: "https://a:1", insecure-skip-tls-verify: yes, disable-compression: on}}]
base: &base {token: 2001-12-14}
users: [{name: u, user: {<<: *base}}]
contexts: [{name: c, context: {cluster: k, user: u, namespace: 1:20}}]
`),
    },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      config: () => ({
        host: 'https://a:1',
        tlsClientConfig: { insecure: true },
        disableCompression: true,
        bearerToken: '2001-12-14',
        namespace: '1:20',
      }),
    },
  },
  {
    name: 'YAML 1.1: an unquoted no is a boolean, not a namespace (the Norway problem, an error in client-go too)',
    files: { config: simple('https://a:1').replace('user: u}', 'user: u, namespace: no}') },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      error: (d) => ({
        code: 'InvalidEntry',
        message: `${d}/config: contexts[c].namespace: must be a string`,
      }),
    },
  },
  {
    name: 'C17: a CA together with insecure-skip-tls-verify is a config error',
    files: {
      config: simple(
        'https://a:1',
        '{}',
        `, certificate-authority-data: ${b64(CA_PEM)}, insecure-skip-tls-verify: true`,
      ),
    },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      error: (d) => ({
        code: 'ConflictingFields',
        message: `${d}/config: clusters[k]: certificate-authority and insecure-skip-tls-verify are mutually exclusive (a root CA with the insecure flag is not allowed)`,
      }),
    },
  },
  {
    name: 'proxy-url is kept whatever HTTPS_PROXY says (it wins at request time)',
    files: { config: simple('https://a:1', '{}', ', proxy-url: "socks5://127.0.0.1:1080"') },
    options: (d) => ({ kubeconfig: `${d}/config`, env: { HTTPS_PROXY: 'http://other:3128' } }),
    want: {
      config: () => ({ host: 'https://a:1', tlsClientConfig: {}, proxyUrl: 'socks5://127.0.0.1:1080' }),
    },
  },
  {
    name: 'a proxy-url with an unsupported scheme is an error',
    files: { config: simple('https://a:1', '{}', ', proxy-url: "ftp://p:21"') },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      error: (d) => ({
        code: 'InvalidProxyUrl',
        message: `${d}/config: clusters[k].proxy-url: unsupported scheme "ftp", must be http, https, or socks5`,
      }),
    },
  },
  {
    name: 'disable-compression',
    files: { config: simple('https://a:1', '{}', ', disable-compression: true') },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: { config: () => ({ host: 'https://a:1', tlsClientConfig: {}, disableCompression: true }) },
  },
  {
    name: 'impersonation: as, as-uid, as-groups, as-user-extra',
    files: {
      config: simple(
        'https://a:1',
        '{token: t, as: alice, as-uid: "42", as-groups: [dev, ops], as-user-extra: {scopes: [view]}}',
      ),
    },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      config: () => ({
        host: 'https://a:1',
        tlsClientConfig: {},
        bearerToken: 't',
        impersonate: { userName: 'alice', uid: '42', groups: ['dev', 'ops'], extra: { scopes: ['view'] } },
      }),
    },
  },
  {
    name: 'oidc auth-provider is kept for the client-node authenticator',
    files: {
      config: simple(
        'https://a:1',
        '{auth-provider: {name: oidc, config: {id-token: x, idp-issuer-url: "https://idp"}}}',
      ),
    },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      config: () => ({
        host: 'https://a:1',
        tlsClientConfig: {},
        authProvider: { name: 'oidc', config: { 'id-token': 'x', 'idp-issuer-url': 'https://idp' } },
      }),
    },
  },
  {
    name: 'the removed gcp auth-provider is an error pointing to exec plugins',
    files: { config: simple('https://a:1', '{auth-provider: {name: gcp}}') },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: {
      error: (d) => ({
        code: 'UnsupportedAuthProvider',
        message: `${d}/config: users[u].auth-provider.name: auth provider "gcp" was removed upstream; use an exec credential plugin instead`,
      }),
    },
  },
  {
    name: 'credentials are not applied to an http:// server, with a warning',
    files: { config: simple('http://127.0.0.1:8080', '{token: t, as: alice}') },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: { config: () => ({ host: 'http://127.0.0.1:8080', tlsClientConfig: {} }) },
    warnings: () => [
      'contexts[c]: server http://127.0.0.1:8080 is not https; the credentials of user "u" are not sent (client-go\'s rule)',
    ],
  },
  {
    name: 'in-cluster when KUBECONFIG is unset (token set as token and token file, CA read)',
    files: { 'sa/token': 'sa-token\n', 'sa/ca.crt': CA_PEM, 'home/.kube/config': simple('https://home:1') },
    options: (d) => ({
      env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccountDir: `${d}/sa`,
      homeDir: `${d}/home`,
    }),
    want: {
      config: (d) => ({
        host: 'https://10.0.0.1:443',
        tlsClientConfig: { caData: CA_PEM, caFile: `${d}/sa/ca.crt` },
        bearerToken: 'sa-token',
        bearerTokenFile: `${d}/sa/token`,
        namespace: 'default',
      }),
    },
  },
  {
    name: 'in-cluster namespace: POD_NAMESPACE wins over the service account file',
    files: { 'sa/token': 'sa-token', 'sa/namespace': 'from-file\n' },
    options: (d) => ({
      env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443', POD_NAMESPACE: 'from-env' },
      serviceAccountDir: `${d}/sa`,
    }),
    want: {
      config: (d) => ({
        host: 'https://10.0.0.1:443',
        tlsClientConfig: {},
        bearerToken: 'sa-token',
        bearerTokenFile: `${d}/sa/token`,
        namespace: 'from-env',
      }),
    },
    warnings: (d) => [`in-cluster: cannot read ${d}/sa/ca.crt; using the system roots`],
  },
  {
    name: 'in-cluster namespace from the service account file',
    files: { 'sa/token': 'sa-token', 'sa/namespace': 'from-file\n', 'sa/ca.crt': CA_PEM },
    options: (d) => ({
      env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccountDir: `${d}/sa`,
    }),
    want: {
      config: (d) => ({
        host: 'https://10.0.0.1:443',
        tlsClientConfig: { caData: CA_PEM, caFile: `${d}/sa/ca.crt` },
        bearerToken: 'sa-token',
        bearerTokenFile: `${d}/sa/token`,
        namespace: 'from-file',
      }),
    },
  },
  {
    name: 'the context namespace is carried',
    files: {
      config: kc(`current-context: c
clusters: [{name: k, cluster: {server: "https://a:1"}}]
contexts: [{name: c, context: {cluster: k, namespace: team-a}}]
`),
    },
    options: (d) => ({ kubeconfig: `${d}/config` }),
    want: { config: () => ({ host: 'https://a:1', tlsClientConfig: {}, namespace: 'team-a' }) },
  },
  {
    name: 'in-cluster with an IPv6 service host',
    files: { 'sa/token': 'sa-token', 'sa/ca.crt': CA_PEM },
    options: (d) => ({
      env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' },
      serviceAccountDir: `${d}/sa`,
    }),
    want: {
      config: (d) => ({
        host: 'https://[fd00::1]:6443',
        tlsClientConfig: { caData: CA_PEM, caFile: `${d}/sa/ca.crt` },
        bearerToken: 'sa-token',
        bearerTokenFile: `${d}/sa/token`,
        namespace: 'default',
      }),
    },
  },
  {
    name: 'with KUBECONFIG set, in-cluster is not tried first',
    files: { 'sa/token': 'sa-token', 'a.yaml': simple('https://kubeconfig:1') },
    options: (d) => ({
      env: { KUBECONFIG: `${d}/a.yaml`, KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccountDir: `${d}/sa`,
    }),
    want: { config: () => ({ host: 'https://kubeconfig:1', tlsClientConfig: {} }) },
  },
  {
    name: 'an empty KUBECONFIG counts as unset: in-cluster is tried first',
    files: { 'sa/token': 'sa-token', 'home/.kube/config': simple('https://home:1') },
    options: (d) => ({
      env: { KUBECONFIG: '', KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccountDir: `${d}/sa`,
      homeDir: `${d}/home`,
    }),
    want: {
      config: (d) => ({
        host: 'https://10.0.0.1:443',
        tlsClientConfig: {},
        bearerToken: 'sa-token',
        bearerTokenFile: `${d}/sa/token`,
        namespace: 'default',
      }),
    },
    warnings: (d) => [`in-cluster: cannot read ${d}/sa/ca.crt; using the system roots`],
  },
  {
    name: 'in-cluster env without a token falls back to ~/.kube/config',
    files: { 'home/.kube/config': simple('https://home:1') },
    options: (d) => ({
      env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccountDir: `${d}/no-sa`,
      homeDir: `${d}/home`,
    }),
    want: { config: () => ({ host: 'https://home:1', tlsClientConfig: {} }) },
  },
  {
    name: 'nothing anywhere: a clear error',
    options: (d) => ({ homeDir: `${d}/home` }),
    want: {
      error: () => ({
        code: 'NoConfiguration',
        message:
          'no configuration has been provided: pass --kubeconfig, set KUBECONFIG, run in a cluster or create ~/.kube/config',
      }),
    },
  },
  {
    name: 'QPS, burst and timeout options (negative QPS disables throttling)',
    files: { config: simple('https://a:1') },
    options: (d) => ({ kubeconfig: `${d}/config`, qps: -1, burst: 0, timeoutMs: 5000 }),
    want: {
      config: () => ({ host: 'https://a:1', tlsClientConfig: {}, qps: -1, burst: 0, timeoutMs: 5000 }),
    },
  },
];

describe('kubeconfig conformance (client-go loading and merge rules)', () => {
  it('has at least 30 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
  });

  cases.forEach((c, i) => {
    it(c.name, () => {
      const dir = path.join(root, `case-${i}`);
      fs.mkdirSync(dir, { recursive: true });
      for (const [rel, text] of Object.entries(c.files ?? {})) {
        const p = path.join(dir, rel);
        fs.mkdirSync(path.dirname(p), { recursive: true });
        fs.writeFileSync(p, text.replaceAll('{dir}', dir));
      }
      for (const rel of c.executables ?? []) fs.chmodSync(path.join(dir, rel), 0o755);
      const warnings: string[] = [];
      const opts: LoadRestConfigOptions = {
        env: {},
        argv: ['node', 'test'],
        homeDir: path.join(dir, 'no-home'),
        userAgent: UA,
        onWarning: (m) => warnings.push(m),
        ...c.options(dir),
      };
      if ('error' in c.want) {
        const want = c.want.error(dir);
        let thrown: unknown;
        try {
          loadRestConfig(opts);
        } catch (e) {
          thrown = e;
        }
        expect(thrown).toBeInstanceOf(KubeconfigError);
        expect({ code: (thrown as KubeconfigError).code, message: (thrown as Error).message }).toEqual(want);
        expect((thrown as Error).message).not.toMatch(/\n\s+at /);
      } else {
        const cfg = loadRestConfig(opts);
        expect({ ...cfg }).toEqual({
          qps: 20,
          burst: 30,
          timeoutMs: 0,
          userAgent: UA,
          ...c.want.config(dir),
        });
      }
      expect(warnings).toEqual(c.warnings?.(dir) ?? []);
    });
  });
});
