/**
 * The named formats of the Kubernetes CEL format library (`format.dns1123Label()` and the others): each
 * returns the error messages apimachinery's util/validation gives for the string, none when it is valid.
 */
import { parseURL } from './k8s-values.js';

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
    else for (const m of dns1123Subdomain(parts[0] as string)) out.push(`prefix part ${m}`);
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

/** The validators by format name (library.Format's table). */
export const FORMATS: Record<string, (s: string) => string[]> = {
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
