/**
 * Reading, parsing and merging kubeconfig files by client-go's rules (`tools/clientcmd/loader.go`):
 * the first file to define a named cluster/user/context wins it whole, `current-context` comes from the
 * first file that sets it, and relative paths resolve against the folder of the file that names them.
 * @internal
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  type DocumentOptions,
  type ParseOptions,
  parse as parseYaml,
  type SchemaOptions,
  type Tags,
  YAMLParseError,
} from 'yaml';
import { KubeconfigError } from '../errors.js';

/** A named entry and the file that defined it. */
export interface Sourced<T> {
  readonly name: string;
  readonly value: T;
  readonly file: string;
}

export interface RawCluster {
  readonly server?: unknown;
  readonly 'certificate-authority'?: unknown;
  readonly 'certificate-authority-data'?: unknown;
  readonly 'insecure-skip-tls-verify'?: unknown;
  readonly 'tls-server-name'?: unknown;
  readonly 'proxy-url'?: unknown;
  readonly 'disable-compression'?: unknown;
  readonly extensions?: unknown;
}

export type RawUser = Readonly<Record<string, unknown>>;

export interface RawContext {
  readonly cluster?: unknown;
  readonly user?: unknown;
  readonly namespace?: unknown;
}

/** The merged view of one or more kubeconfig files. */
export interface MergedKubeconfig {
  readonly files: readonly string[];
  readonly clusters: ReadonlyMap<string, Sourced<RawCluster>>;
  readonly users: ReadonlyMap<string, Sourced<RawUser>>;
  readonly contexts: ReadonlyMap<string, Sourced<RawContext>>;
  /** The first non-empty `current-context`, and the file it came from. */
  readonly currentContext?: { readonly name: string; readonly file: string };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * How kubectl reads a kubeconfig: client-go decodes it with sigs.k8s.io/yaml, i.e. go-yaml v2, which is YAML
 * 1.1 — unquoted `yes`/`no`/`on`/`off`/`y`/`n` are booleans (so `insecure-skip-tls-verify: yes` is true and
 * `namespace: no` is not a string), `0644` is octal, `<<` merge keys work — while timestamps and `1:20`
 * (sexagesimal) stay text when read into an untyped value, as go-yaml v2 keeps them.
 */
const KUBECONFIG_YAML: ParseOptions & DocumentOptions & SchemaOptions = {
  version: '1.1',
  customTags: (tags: Tags) =>
    tags.filter(
      (t) => typeof t === 'string' || (t.format !== 'TIME' && t.tag !== 'tag:yaml.org,2002:timestamp'),
    ),
  prettyErrors: true,
  uniqueKeys: false,
  logLevel: 'error',
};

/** Read and parse one kubeconfig file into a plain object; errors name the file, never a parser stack. */
export function readKubeconfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new KubeconfigError('FileNotFound', 'file not found', { file });
    throw new KubeconfigError('FileUnreadable', `cannot read file (${code ?? 'error'})`, { file });
  }
  let doc: unknown;
  try {
    // logLevel 'error': the parser's warnings (an unresolved tag, …) go to process warnings quoting the source
    // line, which can hold a token; the loader reports problems itself, naming file and field, never the text.
    doc = parseYaml(text, KUBECONFIG_YAML);
  } catch (e) {
    if (e instanceof YAMLParseError) {
      const pos = e.linePos?.[0];
      const at = pos ? ` at line ${pos.line}, column ${pos.col}` : '';
      throw new KubeconfigError('InvalidYaml', `not valid YAML${at}: ${e.code}`, { file });
    }
    throw new KubeconfigError('InvalidYaml', 'not valid YAML', { file });
  }
  if (doc === null || doc === undefined) return {};
  if (!isRecord(doc)) throw new KubeconfigError('InvalidYaml', 'top level is not a mapping', { file });
  return doc;
}

function resolveAgainst(dir: string, value: unknown): unknown {
  if (typeof value !== 'string' || value === '' || path.isAbsolute(value)) return value;
  return path.resolve(dir, value);
}

function resolveClusterPaths(dir: string, c: RawCluster): RawCluster {
  if (c['certificate-authority'] === undefined) return c;
  return { ...c, 'certificate-authority': resolveAgainst(dir, c['certificate-authority']) };
}

function resolveUserPaths(dir: string, u: RawUser): RawUser {
  const out: Record<string, unknown> = { ...u };
  for (const key of ['client-certificate', 'client-key', 'tokenFile', 'token-file']) {
    if (out[key] !== undefined) out[key] = resolveAgainst(dir, out[key]);
  }
  const exec = out.exec;
  if (isRecord(exec) && typeof exec.command === 'string' && exec.command.includes(path.sep)) {
    out.exec = { ...exec, command: resolveAgainst(dir, exec.command) };
  }
  return out;
}

function namedEntries(
  doc: Record<string, unknown>,
  list: 'clusters' | 'users' | 'contexts',
  inner: 'cluster' | 'user' | 'context',
  file: string,
): Array<{ name: string; value: Record<string, unknown> }> {
  const raw = doc[list];
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new KubeconfigError('InvalidEntry', 'not a list', { file, field: list });
  return raw.map((entry, i) => {
    if (!isRecord(entry)) {
      throw new KubeconfigError('InvalidEntry', 'not a mapping', { file, field: `${list}[${i}]` });
    }
    const name = entry.name;
    if (typeof name !== 'string' || name === '') {
      throw new KubeconfigError('InvalidEntry', 'missing name', { file, field: `${list}[${i}].name` });
    }
    const value = entry[inner];
    if (value !== undefined && value !== null && !isRecord(value)) {
      throw new KubeconfigError('InvalidEntry', 'not a mapping', {
        file,
        field: `${list}[${name}].${inner}`,
      });
    }
    return { name, value: value ?? {} };
  });
}

/**
 * Merge already-parsed files in precedence order (client-go: first definition of a name wins whole;
 * first non-empty `current-context` wins). Relative paths are resolved against each file's folder.
 */
export function mergeKubeconfigs(
  docs: ReadonlyArray<{ file: string; doc: Record<string, unknown> }>,
): MergedKubeconfig {
  const clusters = new Map<string, Sourced<RawCluster>>();
  const users = new Map<string, Sourced<RawUser>>();
  const contexts = new Map<string, Sourced<RawContext>>();
  let currentContext: { name: string; file: string } | undefined;
  for (const { file, doc } of docs) {
    const dir = path.dirname(path.resolve(file));
    for (const { name, value } of namedEntries(doc, 'clusters', 'cluster', file)) {
      if (!clusters.has(name)) clusters.set(name, { name, file, value: resolveClusterPaths(dir, value) });
    }
    for (const { name, value } of namedEntries(doc, 'users', 'user', file)) {
      if (!users.has(name)) users.set(name, { name, file, value: resolveUserPaths(dir, value) });
    }
    for (const { name, value } of namedEntries(doc, 'contexts', 'context', file)) {
      if (!contexts.has(name)) contexts.set(name, { name, file, value });
    }
    const cc = doc['current-context'];
    if (currentContext === undefined && typeof cc === 'string' && cc !== '')
      currentContext = { name: cc, file };
  }
  return {
    files: docs.map((d) => d.file),
    clusters,
    users,
    contexts,
    ...(currentContext ? { currentContext } : {}),
  };
}

/**
 * Split a `KUBECONFIG` value with the OS path-list separator, drop empty entries and duplicates
 * (client-go keeps the first occurrence).
 */
export function splitKubeconfigEnv(value: string, delimiter: string = path.delimiter): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const part of value.split(delimiter)) {
    if (part === '' || seen.has(part)) continue;
    seen.add(part);
    out.push(part);
  }
  return out;
}

/**
 * Load and merge a list of files. With `skipMissing` (the `KUBECONFIG` list) a missing file is ignored;
 * otherwise (an explicit `--kubeconfig`) it is an error. Any unreadable or invalid file is an error.
 */
export function loadKubeconfigFiles(files: readonly string[], skipMissing: boolean): MergedKubeconfig {
  const docs: Array<{ file: string; doc: Record<string, unknown> }> = [];
  for (const file of files) {
    try {
      docs.push({ file, doc: readKubeconfigFile(file) });
    } catch (e) {
      if (skipMissing && e instanceof KubeconfigError && e.code === 'FileNotFound') continue;
      throw e;
    }
  }
  return mergeKubeconfigs(docs);
}
