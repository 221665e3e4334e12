/**
 * The string formats a kube-apiserver checks in custom resources: apiextensions-apiserver keeps only the formats
 * in its supported list (`validation.supportedFormats`; any other `format` is stripped before validation, so it
 * is never checked), and kube-openapi's strfmt registry decides what a valid value is. Format names are
 * normalised as go-openapi does (dashes removed: `date-time` is `datetime`). Each checker below follows the Go
 * function named beside it; where Go's parser is more involved (net/mail, net/url) the checker keeps the
 * accept/refuse decision for the usual inputs and is documented as an approximation in the README.
 */

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
// strfmt HostnamePattern (RE2 \p{S}\p{L} as Unicode property escapes)
const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const DATE_TIME_TAIL = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;
const HEXCOLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGBCOLOR =
  /^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$/;
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const CREDITCARD =
  /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$/;

/** net/netip-free IPv4 parse, tolerating leading zeros (netutils.ParseIPSloppy). */
function isIPv4Sloppy(s: string): boolean {
  const parts = s.split('.');
  return parts.length === 4 && parts.every((p) => /^[0-9]{1,3}$/.test(p) && Number(p) <= 255);
}

/** net.ParseIP for an IPv6 text form (an embedded dotted IPv4 tail counts as two groups). */
function isIPv6(s: string): boolean {
  if (!s.includes(':')) return false;
  let rest = s;
  const lastColon = s.lastIndexOf(':');
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    if (!isIPv4Sloppy(tail)) return false;
    rest = `${s.slice(0, lastColon + 1)}0:0`;
  }
  const hex = (g: string) => /^[0-9a-fA-F]{1,4}$/.test(g);
  const dbl = rest.split('::');
  if (dbl.length > 2) return false;
  if (dbl.length === 2) {
    const a = dbl[0] === '' ? [] : (dbl[0] as string).split(':');
    const b = dbl[1] === '' ? [] : (dbl[1] as string).split(':');
    return a.every(hex) && b.every(hex) && a.length + b.length < 8;
  }
  const g = rest.split(':');
  return g.length === 8 && g.every(hex);
}

function isIP(s: string): boolean {
  return isIPv4Sloppy(s) || isIPv6(s);
}

/** netutils.ParseCIDRSloppy. */
function isCIDR(s: string): boolean {
  const i = s.indexOf('/');
  if (i < 0) return false;
  const addr = s.slice(0, i);
  const bits = s.slice(i + 1);
  if (!/^[0-9]{1,3}$/.test(bits)) return false;
  if (isIPv4Sloppy(addr)) return Number(bits) <= 32;
  if (isIPv6(addr)) return Number(bits) <= 128;
  return false;
}

/** net.ParseMAC: 6, 8 or 20 octets as xx:xx…, xx-xx… or xxxx.xxxx…. */
function isMAC(s: string): boolean {
  const ok = (n: number) => n === 6 || n === 8 || n === 20;
  if (s.length < 14) return false;
  if (s[2] === ':' || s[2] === '-') {
    const parts = s.split(s[2]);
    return ok(parts.length) && parts.every((p) => /^[0-9a-fA-F]{2}$/.test(p));
  }
  if (s[4] === '.') {
    const parts = s.split('.');
    return ok(parts.length * 2) && parts.every((p) => /^[0-9a-fA-F]{4}$/.test(p));
  }
  return false;
}

/** time.Parse("2006-01-02", s): a real calendar date, four-digit year. */
function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1) return false;
  const days = [
    31,
    y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28,
    31,
    30,
    31,
    30,
    31,
    31,
    30,
    31,
    30,
    31,
  ];
  return d <= (days[mo - 1] as number);
}

/** strfmt.IsDateTime: a date, a 't' (any case), a time with an optional fraction and a zone. */
function isDateTime(s: string): boolean {
  if (s.length < 4) return false;
  const parts = s.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0] as string)) return false;
  const m = DATE_TIME_TAIL.exec(parts[1] as string);
  if (!m) return false;
  return (m[1] as string) <= '23' && (m[2] as string) <= '59' && (m[3] as string) <= '59';
}

/** time.ParseDuration, or strfmt's scala-style "<n> <unit>" pairs. */
function isDuration(s: string): boolean {
  if (/^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/.test(s) || s === '0') return true;
  const units = [
    ['ns', 'nano'],
    ['us', 'µs', 'micro'],
    ['ms', 'milli'],
    ['s', 'sec'],
    ['m', 'min'],
    ['h', 'hr', 'hour'],
    ['d', 'day'],
    ['w', 'wk', 'week'],
  ];
  for (const m of s.matchAll(/(\d+)\s*([A-Za-zµ]+)/g)) {
    const unit = (m[2] as string).toLowerCase();
    for (const variants of units) {
      const last = variants.length - 1;
      if (variants.some((v, i) => (i === last && unit.startsWith(v)) || v === unit)) return true;
    }
  }
  return false;
}

/** url.ParseRequestURI: an absolute URI (scheme:…) or an absolute path; no spaces in the authority. */
function isRequestURI(s: string): boolean {
  if (s === '' || [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) return false;
  if (s.startsWith('/')) return true;
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):(.*)$/s.exec(s);
  if (!m) return false;
  const rest = m[2] as string;
  if (rest.startsWith('//')) {
    const authority = rest.slice(2).split(/[/?#]/)[0] as string;
    if (/[\s<>"{}|\\^`]/.test(authority)) return false;
    const host = authority.includes('@') ? authority.slice(authority.lastIndexOf('@') + 1) : authority;
    const port = /:([^\]]*)$/.exec(host);
    if (port && !/^[0-9]*$/.test(port[1] as string)) return false;
  }
  return true;
}

/** net/mail.ParseAddress, for the usual `local@domain` and `Name <local@domain>` forms. */
function isEmail(s: string): boolean {
  const angle = /^[^<>]*<([^<>]+)>\s*$/.exec(s);
  const addr = (angle ? angle[1] : s) as string;
  return /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9.-]+$/.test(addr.trim()) && !addr.includes('..');
}

function isISBN10(s: string): boolean {
  const d = s.replace(/[\s-]/g, '');
  if (!/^\d{9}[\dX]$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += (10 - i) * (d[i] === 'X' ? 10 : Number(d[i]));
  return sum % 11 === 0;
}

function isISBN13(s: string): boolean {
  const d = s.replace(/[\s-]/g, '');
  if (!/^\d{13}$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(d[i]) * (i % 2 === 0 ? 1 : 3);
  return (10 - (sum % 10)) % 10 === Number(d[12]);
}

function isCreditCard(s: string): boolean {
  const d = s.replace(/[^0-9]+/g, '');
  if (!CREDITCARD.test(d)) return false;
  let sum = 0;
  let dbl = false;
  for (let i = d.length - 1; i >= 0; i--) {
    let n = Number(d[i]);
    if (dbl) {
      n *= 2;
      if (n > 9) n -= 9;
    }
    sum += n;
    dbl = !dbl;
  }
  return sum % 10 === 0;
}

function isHostname(s: string): boolean {
  return (
    HOSTNAME.test(s) && Buffer.byteLength(s) <= 255 && s.split('.').every((p) => Buffer.byteLength(p) <= 63)
  );
}

const CHECKERS: Readonly<Record<string, (s: string) => boolean>> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: isRequestURI,
  email: isEmail,
  hostname: isHostname,
  ipv4: (s) => isIP(s) && s.includes('.'),
  ipv6: (s) => isIP(s) && s.includes(':'),
  cidr: isCIDR,
  mac: isMAC,
  uuid: (s) => UUID.test(s),
  uuid3: (s) => UUID3.test(s),
  uuid4: (s) => UUID4.test(s),
  uuid5: (s) => UUID5.test(s),
  isbn: (s) => isISBN10(s) || isISBN13(s),
  isbn10: isISBN10,
  isbn13: isISBN13,
  creditcard: isCreditCard,
  ssn: (s) => SSN.test(s),
  hexcolor: (s) => HEXCOLOR.test(s),
  rgbcolor: (s) => RGBCOLOR.test(s),
  byte: (s) => BASE64.test(s),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
};

/**
 * The checker for a schema `format`, or undefined when kube-apiserver does not check that format (it strips
 * unsupported formats, so e.g. `int32` on a string or `quantity` is never enforced).
 */
export function formatChecker(format: string): ((s: string) => boolean) | undefined {
  return CHECKERS[format.replace(/-/g, '')];
}
