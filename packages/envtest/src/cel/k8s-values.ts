/**
 * The values of the Kubernetes CEL libraries and their parsers (k8s.io/apiserver pkg/cel/library): URLs as
 * url.ParseRequestURI reads them, `resource.Quantity`, IP addresses as netip.ParseAddr reads them (no leading
 * zeros, no zone) and CIDRs, with the address arithmetic the IP and CIDR functions need.
 */

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
    if (v4?.family !== 4) return undefined;
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

/** The address in its canonical form (dotted quad; RFC 5952 for IPv6), as netip.Addr.String prints it. */
export function ipString(ip: KubeIP): string {
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

/** netip.ParsePrefix as library.CIDR requires it: an address by parseIP, a decimal prefix length within its width. */
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

/** The CIDR with the host bits of its address cleared (netip.Prefix.Masked). */
export function masked(c: KubeCIDR): KubeCIDR {
  const width = c.ip.family === 4 ? 32n : 128n;
  const host = width - BigInt(c.prefix);
  const n = (c.ip.n >> host) << host;
  const ip = new KubeIP(c.ip.family, n, '');
  return new KubeCIDR(new KubeIP(c.ip.family, n, ipString(ip)), c.prefix);
}

/** Whether the address is in the CIDR (same family, same network bits). */
export function containsIP(c: KubeCIDR, ip: KubeIP): boolean {
  if (ip.family !== c.ip.family) return false;
  const width = c.ip.family === 4 ? 32n : 128n;
  const host = width - BigInt(c.prefix);
  return ip.n >> host === c.ip.n >> host;
}

/** url.ParseRequestURI, as library.URLs uses it. */
export function parseURL(s: string): KubeURL | undefined {
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s) && !s.startsWith('/')) return undefined;
  try {
    return new KubeURL(new URL(s, s.startsWith('/') ? 'relative:///' : undefined));
  } catch {
    return undefined;
  }
}
