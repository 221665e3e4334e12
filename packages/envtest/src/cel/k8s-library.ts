/**
 * The Kubernetes CEL libraries a kube-apiserver 1.32 offers to CRD validation rules (k8s.io/apiserver
 * pkg/cel/library and cel-go ext, as enabled by `environment.MustBaseEnvSet` for compatibility version 1.31):
 * lists (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`), regex (`find`, `findAll`), URLs (`url`,
 * `isURL`, `getScheme`, `getHost`, `getHostname`, `getPort`, `getEscapedPath`, `getQuery`), quantity (`quantity`,
 * `isQuantity`, `isInteger`, `asInteger`, `asApproximateFloat`, `sign`, `add`, `sub`, `isGreaterThan`,
 * `isLessThan`, `compareTo`), IP and CIDR (`ip`, `isIP`, `family`, `isUnspecified`,
 * `isLoopback`, `isLinkLocalMulticast`, `isLinkLocalUnicast`, `isGlobalUnicast`, `cidr`, `isCIDR`, `containsIP`,
 * `containsCIDR`, `masked`, `prefixLength`, `string()`), format (`format.<name>()`, `format.named()`,
 * `validate`) and sets (`sets.contains`, `sets.equivalent`, `sets.intersects`), registered as typed overloads on
 * a `@marcbachmann/cel-js` Environment (the project's CEL evaluator, see /CEL-CHOICE.md in the worktree notes).
 * The evaluator itself is the library's; these functions only follow the upstream libraries' documented
 * semantics. Regex functions use RE2 (`@bufbuild/re2` has no submatch API, so `find` locates the match with the
 * ECMAScript engine after the pattern compiled as RE2).
 */
import { type Environment, Optional } from '@marcbachmann/cel-js';
import { compileRe2 } from '../schema/json-value.js';

class CelError extends Error {}

/** A parsed URL (library.URLs): scheme, host (with port), hostname, port, escaped path, query. */
export class KubeURL {
  constructor(readonly u: URL) {}
}

/** A parsed `resource.Quantity` as a decimal number. */
export class Quantity {
  constructor(
    readonly value: number,
    readonly text: string,
  ) {}
}

/** An IP address (library.IP): family and the address as a big integer. */
export class KubeIP {
  constructor(
    readonly family: 4 | 6,
    readonly n: bigint,
    readonly text: string,
  ) {}
}

/** A CIDR (library.CIDR): the address and the prefix length. */
export class KubeCIDR {
  constructor(
    readonly ip: KubeIP,
    readonly prefix: number,
  ) {}
}

/** A named format (library.Format). */
export class KubeFormat {
  constructor(
    readonly name: string,
    readonly check: (s: string) => string[],
  ) {}
}

class FormatNamespace {}
class SetsNamespace {}

const QUANTITY =
  /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$/;
const SUFFIX: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** resource.ParseQuantity (decimal value; precision beyond float64 is not kept). */
export function parseQuantity(s: string): Quantity | undefined {
  const m = QUANTITY.exec(s);
  if (!m) return undefined;
  const num = Number(m[1]);
  const suf = m[2] ?? '';
  const mult = /^[eE]/.test(suf) ? 10 ** Number(suf.slice(1)) : SUFFIX[suf];
  if (mult === undefined || !Number.isFinite(num)) return undefined;
  return new Quantity(num * mult, s);
}

/** netip.ParseAddr as library.IP requires it: no leading zeros, no zone. */
export function parseIP(s: string): KubeIP | undefined {
  if (s.includes('%')) return undefined;
  if (/^[0-9.]+$/.test(s)) {
    const p = s.split('.');
    if (p.length !== 4 || p.some((x) => !/^(0|[1-9][0-9]{0,2})$/.test(x) || Number(x) > 255))
      return undefined;
    return new KubeIP(
      4,
      p.reduce((a, x) => (a << 8n) | BigInt(x), 0n),
      s,
    );
  }
  if (!s.includes(':')) return undefined;
  let text = s;
  let tail: bigint[] = [];
  const last = s.lastIndexOf(':');
  if (s.slice(last + 1).includes('.')) {
    const v4 = parseIP(s.slice(last + 1));
    if (!v4 || v4.family !== 4) return undefined;
    tail = [v4.n >> 16n, v4.n & 0xffffn];
    const head = s.slice(0, last + 1);
    text = head.endsWith('::') ? head : head.slice(0, -1);
  }
  const hex = (g: string) => /^[0-9a-fA-F]{1,4}$/.test(g);
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const want = 8 - tail.length;
  let groups: string[];
  if (halves.length === 2) {
    const a = halves[0] === '' ? [] : (halves[0] as string).split(':');
    const b = halves[1] === '' ? [] : (halves[1] as string).split(':');
    if (!a.every(hex) || !b.every(hex) || a.length + b.length >= want) return undefined;
    groups = [...a, ...Array(want - a.length - b.length).fill('0'), ...b];
  } else {
    groups = text === '' ? [] : text.split(':');
    if (groups.length !== want || !groups.every(hex)) return undefined;
  }
  const all = [...groups.map((g) => BigInt(`0x${g}`)), ...tail];
  return new KubeIP(
    6,
    all.reduce((a, x) => (a << 16n) | x, 0n),
    s,
  );
}

function ipString(ip: KubeIP): string {
  if (ip.family === 4) return [24n, 16n, 8n, 0n].map((sh) => String((ip.n >> sh) & 0xffn)).join('.');
  const g = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((sh) => Number((ip.n >> sh) & 0xffffn));
  // RFC 5952: the longest run (>= 2) of zero groups becomes ::
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const h = g.map((x) => x.toString(16));
  if (best < 0) return h.join(':');
  return `${h.slice(0, best).join(':')}::${h.slice(best + bestLen).join(':')}`;
}

export function parseCIDR(s: string): KubeCIDR | undefined {
  const i = s.indexOf('/');
  if (i < 0) return undefined;
  const ip = parseIP(s.slice(0, i));
  const bits = s.slice(i + 1);
  if (!ip || !/^(0|[1-9][0-9]{0,2})$/.test(bits)) return undefined;
  const p = Number(bits);
  if (p > (ip.family === 4 ? 32 : 128)) return undefined;
  return new KubeCIDR(ip, p);
}

function masked(c: KubeCIDR): KubeCIDR {
  const width = c.ip.family === 4 ? 32n : 128n;
  const host = width - BigInt(c.prefix);
  const n = (c.ip.n >> host) << host;
  const ip = new KubeIP(c.ip.family, n, '');
  return new KubeCIDR(new KubeIP(c.ip.family, n, ipString(ip)), c.prefix);
}

function containsIP(c: KubeCIDR, ip: KubeIP): boolean {
  if (ip.family !== c.ip.family) return false;
  const width = c.ip.family === 4 ? 32n : 128n;
  const host = width - BigInt(c.prefix);
  return ip.n >> host === c.ip.n >> host;
}

/** url.ParseRequestURI, as library.URLs uses it. */
function parseURL(s: string): KubeURL | undefined {
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s) && !s.startsWith('/')) return undefined;
  try {
    return new KubeURL(new URL(s, s.startsWith('/') ? 'relative:///' : undefined));
  } catch {
    return undefined;
  }
}

// validation.IsDNS1123Label & co. (apimachinery util/validation), the messages the format library returns
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function regexError(msg: string, fmt: string, examples: string[]): string {
  return `${msg} (e.g. ${examples.map((e) => `'${e}'`).join(' or ')}, regex used for validation is '${fmt}')`;
}

function dns1123Label(s: string): string[] {
  const out: string[] = [];
  if (s.length > 63) out.push('must be no more than 63 characters');
  if (!DNS1123_LABEL.test(s))
    out.push(
      regexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        '[a-z0-9]([-a-z0-9]*[a-z0-9])?',
        ['my-name', '123-abc'],
      ),
    );
  return out;
}

function dns1123Subdomain(s: string): string[] {
  const out: string[] = [];
  if (s.length > 253) out.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(s))
    out.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*',
        ['example.com'],
      ),
    );
  return out;
}

function dns1035Label(s: string): string[] {
  const out: string[] = [];
  if (s.length > 63) out.push('must be no more than 63 characters');
  if (!DNS1035_LABEL.test(s))
    out.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        '[a-z]([-a-z0-9]*[a-z0-9])?',
        ['my-name', 'abc-123'],
      ),
    );
  return out;
}

function qualifiedName(s: string): string[] {
  const parts = s.split('/');
  const name = parts.length === 2 ? (parts[1] as string) : s;
  const out: string[] = [];
  if (parts.length > 2)
    return [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    ];
  if (parts.length === 2) {
    if ((parts[0] as string).length === 0) out.push('prefix part must be non-empty');
    else out.push(...dns1123Subdomain(parts[0] as string).map((m) => `prefix part ${m}`));
  }
  if (name.length === 0) out.push('name part must be non-empty');
  else if (name.length > 63) out.push('name part must be no more than 63 characters');
  if (name.length > 0 && !QUALIFIED_NAME.test(name))
    out.push(
      `name part ${regexError("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]', ['MyName', 'my.name', '123-abc'])}`,
    );
  return out;
}

function labelValue(s: string): string[] {
  const out: string[] = [];
  if (s.length > 63) out.push('must be no more than 63 characters');
  if (!LABEL_VALUE.test(s))
    out.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?',
        ['MyValue', 'my_value', '12345'],
      ),
    );
  return out;
}

function prefixed(f: (s: string) => string[]): (s: string) => string[] {
  // the *Prefix formats accept a trailing '-' (a generateName prefix)
  return (s) => f(s.endsWith('-') ? s.slice(0, -1) : s);
}

const FORMATS: Record<string, (s: string) => string[]> = {
  dns1123Label,
  dns1123Subdomain,
  dns1035Label,
  qualifiedName,
  dns1123LabelPrefix: prefixed(dns1123Label),
  dns1123SubdomainPrefix: prefixed(dns1123Subdomain),
  dns1035LabelPrefix: prefixed(dns1035Label),
  labelValue,
  uri: (s) => (parseURL(s) ? [] : ['invalid URI']),
  uuid: (s) =>
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s)
      ? []
      : ['does not match the UUID format'],
  byte: (s) => (/^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0 ? [] : ['invalid base64']),
  date: (s) => (/^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)) ? [] : ['invalid date']),
  datetime: (s) => (!Number.isNaN(Date.parse(s)) && /T/i.test(s) ? [] : ['invalid datetime']),
};

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) {
    const x = Number(a);
    const y = Number(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof Quantity && b instanceof Quantity) return Math.sign(a.value - b.value);
  throw new CelError('no such overload');
}

function celEqual(a: unknown, b: unknown): boolean {
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint'))
    return Number(a) === Number(b);
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => celEqual(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ea = a instanceof Map ? [...a.entries()] : Object.entries(a);
    const mb = b instanceof Map ? b : new Map(Object.entries(b));
    return ea.length === mb.size && ea.every(([k, v]) => mb.has(k) && celEqual(v, mb.get(k)));
  }
  return a === b;
}

function findRegex(pattern: string): RegExp {
  const re = compileRe2(pattern);
  if (re instanceof Error) throw new CelError(re.message);
  return new RegExp(pattern, 'gu');
}

/** Register the Kubernetes CEL libraries on `env` (returns it). */
export function registerKubernetesLibraries(env: Environment): Environment {
  env
    .registerType('URL', KubeURL)
    .registerType('Quantity', Quantity)
    .registerType('net.IP', KubeIP)
    .registerType('net.CIDR', KubeCIDR)
    .registerType('kubernetes.NamedFormat', KubeFormat)
    .registerType('FormatNamespace', FormatNamespace)
    .registerType('SetsNamespace', SetsNamespace)
    .registerConstant('format', 'FormatNamespace', new FormatNamespace())
    .registerConstant('sets', 'SetsNamespace', new SetsNamespace());
  // lists
  env
    .registerFunction('list<A>.isSorted(): bool', (l: unknown[]) =>
      l.every((x, i) => i === 0 || compare(l[i - 1], x) <= 0),
    )
    .registerFunction('list<int>.sum(): int', (l: bigint[]) => l.reduce((a, b) => a + b, 0n))
    .registerFunction('list<double>.sum(): double', (l: number[]) => l.reduce((a, b) => a + b, 0))
    .registerFunction('list<A>.min(): A', (l: unknown[]) => {
      if (l.length === 0) throw new CelError('min called on empty list');
      return l.reduce((a, b) => (compare(b, a) < 0 ? b : a));
    })
    .registerFunction('list<A>.max(): A', (l: unknown[]) => {
      if (l.length === 0) throw new CelError('max called on empty list');
      return l.reduce((a, b) => (compare(b, a) > 0 ? b : a));
    })
    .registerFunction('list<A>.indexOf(A): int', (l: unknown[], x: unknown) =>
      BigInt(l.findIndex((y) => celEqual(x, y))),
    )
    .registerFunction('list<A>.lastIndexOf(A): int', (l: unknown[], x: unknown) => {
      for (let i = l.length - 1; i >= 0; i--) if (celEqual(x, l[i])) return BigInt(i);
      return -1n;
    });
  // regex
  env
    .registerFunction(
      'string.find(string): string',
      (s: string, p: string) => findRegex(p).exec(s)?.[0] ?? '',
    )
    .registerFunction('string.findAll(string): list<string>', (s: string, p: string) =>
      [...s.matchAll(findRegex(p))].map((m) => m[0]),
    )
    .registerFunction('string.findAll(string, int): list<string>', (s: string, p: string, n: bigint) => {
      const all = [...s.matchAll(findRegex(p))].map((m) => m[0]);
      return n < 0n ? all : all.slice(0, Number(n));
    });
  // URLs
  env
    .registerFunction('url(string): URL', (s: string) => {
      const u = parseURL(s);
      if (!u)
        throw new CelError(
          `URL parse error during conversion from string: parse "${s}": invalid URI for request`,
        );
      return u;
    })
    .registerFunction('isURL(string): bool', (s: string) => parseURL(s) !== undefined)
    .registerFunction('URL.getScheme(): string', (u: KubeURL) =>
      u.u.protocol === 'relative:' ? '' : u.u.protocol.slice(0, -1),
    )
    .registerFunction('URL.getHost(): string', (u: KubeURL) => u.u.host)
    .registerFunction('URL.getHostname(): string', (u: KubeURL) => u.u.hostname.replace(/^\[(.*)\]$/, '$1'))
    .registerFunction('URL.getPort(): string', (u: KubeURL) => u.u.port)
    .registerFunction('URL.getEscapedPath(): string', (u: KubeURL) => u.u.pathname)
    .registerFunction('URL.getQuery(): map<string, list<string>>', (u: KubeURL) => {
      const out = new Map<string, string[]>();
      for (const [k, v] of u.u.searchParams) out.set(k, [...(out.get(k) ?? []), v]);
      return out;
    });
  // quantity
  const q = (s: string) => {
    const r = parseQuantity(s);
    if (!r)
      throw new CelError(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
      );
    return r;
  };
  env
    .registerFunction('quantity(string): Quantity', q)
    .registerFunction('isQuantity(string): bool', (s: string) => parseQuantity(s) !== undefined)
    .registerFunction('Quantity.isInteger(): bool', (x: Quantity) => Number.isInteger(x.value))
    .registerFunction('Quantity.asInteger(): int', (x: Quantity) => {
      if (!Number.isInteger(x.value)) throw new CelError('cannot convert value to integer');
      return BigInt(x.value);
    })
    .registerFunction('Quantity.asApproximateFloat(): double', (x: Quantity) => x.value)
    .registerFunction('Quantity.sign(): int', (x: Quantity) => BigInt(Math.sign(x.value)))
    .registerFunction(
      'Quantity.add(Quantity): Quantity',
      (a: Quantity, b: Quantity) => new Quantity(a.value + b.value, ''),
    )
    .registerFunction(
      'Quantity.add(int): Quantity',
      (a: Quantity, b: bigint) => new Quantity(a.value + Number(b), ''),
    )
    .registerFunction(
      'Quantity.sub(Quantity): Quantity',
      (a: Quantity, b: Quantity) => new Quantity(a.value - b.value, ''),
    )
    .registerFunction(
      'Quantity.sub(int): Quantity',
      (a: Quantity, b: bigint) => new Quantity(a.value - Number(b), ''),
    )
    .registerFunction(
      'Quantity.isGreaterThan(Quantity): bool',
      (a: Quantity, b: Quantity) => a.value > b.value,
    )
    .registerFunction('Quantity.isLessThan(Quantity): bool', (a: Quantity, b: Quantity) => a.value < b.value)
    .registerFunction('Quantity.compareTo(Quantity): int', (a: Quantity, b: Quantity) =>
      BigInt(Math.sign(a.value - b.value)),
    );
  // IP and CIDR
  const ip = (s: string) => {
    const r = parseIP(s);
    if (!r)
      throw new CelError(
        `IP Address "${s}" parse error during conversion from string: ParseAddr("${s}"): unable to parse IP`,
      );
    return r;
  };
  const cidr = (s: string) => {
    const r = parseCIDR(s);
    if (!r)
      throw new CelError(
        `network address parse error during conversion from string: netip.ParsePrefix("${s}"): bad prefix`,
      );
    return r;
  };
  env
    .registerFunction('ip(string): net.IP', ip)
    .registerFunction('isIP(string): bool', (s: string) => parseIP(s) !== undefined)
    .registerFunction('string(net.IP): string', (x: KubeIP) => ipString(x))
    .registerFunction('net.IP.family(): int', (x: KubeIP) => BigInt(x.family))
    .registerFunction('net.IP.isUnspecified(): bool', (x: KubeIP) => x.n === 0n)
    .registerFunction('net.IP.isLoopback(): bool', (x: KubeIP) =>
      x.family === 4 ? x.n >> 24n === 127n : x.n === 1n,
    )
    .registerFunction('net.IP.isLinkLocalMulticast(): bool', (x: KubeIP) =>
      x.family === 4 ? x.n >> 8n === 0xe00000n : x.n >> 112n === 0xff02n,
    )
    .registerFunction('net.IP.isLinkLocalUnicast(): bool', (x: KubeIP) =>
      x.family === 4 ? x.n >> 16n === 0xa9fen : x.n >> 118n === 0x3fan,
    )
    .registerFunction('net.IP.isGlobalUnicast(): bool', (x: KubeIP) => {
      if (x.n === 0n) return false;
      if (x.family === 4)
        return x.n >> 24n !== 127n && x.n >> 28n !== 0xen && x.n !== 0xffffffffn && x.n >> 16n !== 0xa9fen;
      return x.n !== 1n && x.n >> 120n !== 0xffn && x.n >> 118n !== 0x3fan;
    })
    .registerFunction('cidr(string): net.CIDR', cidr)
    .registerFunction('isCIDR(string): bool', (s: string) => parseCIDR(s) !== undefined)
    .registerFunction('string(net.CIDR): string', (c: KubeCIDR) => `${ipString(c.ip)}/${c.prefix}`)
    .registerFunction('net.CIDR.containsIP(net.IP): bool', (c: KubeCIDR, x: KubeIP) => containsIP(c, x))
    .registerFunction('net.CIDR.containsIP(string): bool', (c: KubeCIDR, s: string) => containsIP(c, ip(s)))
    .registerFunction(
      'net.CIDR.containsCIDR(net.CIDR): bool',
      (c: KubeCIDR, d: KubeCIDR) => d.prefix >= c.prefix && containsIP(c, d.ip),
    )
    .registerFunction('net.CIDR.containsCIDR(string): bool', (c: KubeCIDR, s: string) => {
      const d = cidr(s);
      return d.prefix >= c.prefix && containsIP(c, d.ip);
    })
    .registerFunction('net.CIDR.ip(): net.IP', (c: KubeCIDR) => c.ip)
    .registerFunction('net.CIDR.masked(): net.CIDR', (c: KubeCIDR) => masked(c))
    .registerFunction('net.CIDR.prefixLength(): int', (c: KubeCIDR) => BigInt(c.prefix));
  // equality of the library types (cel-go compares them by value)
  env
    .registerOperator('net.IP == net.IP', (a: KubeIP, b: KubeIP) => a.family === b.family && a.n === b.n)
    .registerOperator(
      'net.CIDR == net.CIDR',
      (a: KubeCIDR, b: KubeCIDR) => a.prefix === b.prefix && a.ip.family === b.ip.family && a.ip.n === b.ip.n,
    )
    .registerOperator('Quantity == Quantity', (a: Quantity, b: Quantity) => a.value === b.value)
    .registerOperator('URL == URL', (a: KubeURL, b: KubeURL) => a.u.href === b.u.href);
  // format
  for (const [name, check] of Object.entries(FORMATS))
    env.registerFunction(
      `FormatNamespace.${name}(): kubernetes.NamedFormat`,
      () => new KubeFormat(name, check),
    );
  env
    .registerFunction(
      'FormatNamespace.named(string): optional<kubernetes.NamedFormat>',
      (_ns: unknown, n: string) => {
        const f = FORMATS[n];
        return f ? Optional.of(new KubeFormat(n, f)) : Optional.none();
      },
    )
    .registerFunction(
      'kubernetes.NamedFormat.validate(string): optional<list<string>>',
      (f: KubeFormat, s: string) => {
        const errs = f.check(s);
        return errs.length ? Optional.of(errs) : Optional.none();
      },
    );
  // sets
  env
    .registerFunction(
      'SetsNamespace.contains(list<A>, list<A>): bool',
      (_ns: unknown, a: unknown[], b: unknown[]) => b.every((x) => a.some((y) => celEqual(x, y))),
    )
    .registerFunction(
      'SetsNamespace.equivalent(list<A>, list<A>): bool',
      (_ns: unknown, a: unknown[], b: unknown[]) =>
        b.every((x) => a.some((y) => celEqual(x, y))) && a.every((x) => b.some((y) => celEqual(x, y))),
    )
    .registerFunction(
      'SetsNamespace.intersects(list<A>, list<A>): bool',
      (_ns: unknown, a: unknown[], b: unknown[]) => a.some((x) => b.some((y) => celEqual(x, y))),
    );
  return env;
}
