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
import { FORMATS } from './k8s-formats.js';
import {
  containsIP,
  ipString,
  KubeCIDR,
  KubeFormat,
  KubeIP,
  KubeURL,
  masked,
  parseCIDR,
  parseIP,
  parseQuantity,
  parseURL,
  Quantity,
} from './k8s-values.js';

class CelError extends Error {}

class FormatNamespace {}
class SetsNamespace {}

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
  // strings extension (version 2) beyond the evaluator's own: charAt, replace
  env
    .registerFunction('string.charAt(int): string', (s: string, i: bigint) => {
      const chars = [...s];
      if (i < 0n || i > BigInt(chars.length)) throw new CelError(`index out of range: ${i}`);
      return chars[Number(i)] ?? '';
    })
    .registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) =>
      replaceN(s, a, b, -1n),
    )
    .registerFunction('string.replace(string, string, int): string', replaceN);
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

/** Go's `strings.Replace(s, old, new, n)`: the first n (all when n < 0) non-overlapping `old`; an empty `old` matches
 * at every character boundary. */
function replaceN(s: string, from: string, to: string, n: bigint): string {
  if (n === 0n) return s;
  const limit = n < 0n ? Number.POSITIVE_INFINITY : Number(n);
  let out = '';
  let count = 0;
  if (from === '') {
    const chars = [...s];
    for (let i = 0; i <= chars.length; i++) {
      if (count < limit) {
        out += to;
        count++;
      }
      out += chars[i] ?? '';
    }
    return out;
  }
  let i = 0;
  for (let at = s.indexOf(from); at >= 0 && count < limit; at = s.indexOf(from, i)) {
    out += s.slice(i, at) + to;
    i = at + from.length;
    count++;
  }
  return out + s.slice(i);
}
