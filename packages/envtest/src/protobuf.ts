/**
 * A decoder for Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`): the `k8s\0`
 * envelope around a `runtime.Unknown` whose raw bytes are the object's message. Messages are decoded generically
 * from the layouts generated out of k8s.io/api's and k8s.io/apimachinery's `generated.proto` files
 * (`protobuf-messages.ts`, see `scripts/gen-protobuf-messages.mjs`), into the object's JSON: field names are the
 * JSON names, `bytes` become base64, `Time`/`MicroTime` RFC 3339 strings, `Quantity` and `IntOrString` their JSON
 * forms, `RawExtension`/`FieldsV1` the JSON they carry. The Go marshaller writes a non-pointer field even when it is
 * zero, and the JSON encoder then drops what is `omitempty`; protobuf cannot tell the two apart, so zero scalars
 * ("", 0, false) and empty messages are dropped (a pointer field explicitly set to 0 or false is lost).
 * Kinds without a layout and malformed bodies are refused (the caller answers 415).
 */
import { PROTOBUF_KINDS, PROTOBUF_MESSAGES } from './protobuf-messages.js';
import type { KObject } from './resource-type.js';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** The `apiVersion/kind`s whose protobuf bodies {@link decodeProtobufObject} decodes: every built-in kind served. */
export const PROTOBUF_DECODABLE_KINDS: ReadonlySet<string> = new Set(Object.keys(PROTOBUF_KINDS));

/** One decoded field: varint as bigint, length-delimited as bytes. */
type Field = {
  readonly no: number;
  readonly varint?: bigint;
  readonly bytes?: Buffer;
  readonly fixed?: Buffer;
};

/** Thrown for a body that is not a decodable, supported protobuf object. */
export class ProtobufDecodeError extends Error {
  readonly code = 'ENVTEST_PROTOBUF';
}

/**
 * The base-128 varint at `buf[at]`: its value and the offset after it. Throws {@link ProtobufDecodeError} for one
 * cut off by the end of `buf` (`truncated <what>`) or longer than 64 bits.
 */
function readVarint(buf: Buffer, at: number, what: string): [value: bigint, next: number] {
  let r = 0n;
  let shift = 0n;
  let i = at;
  for (;;) {
    if (i >= buf.length) throw new ProtobufDecodeError(`truncated ${what}`);
    const b = buf[i++]!;
    r |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [r, i];
    shift += 7n;
    if (shift > 63n) throw new ProtobufDecodeError('varint too long');
  }
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    const [r, next] = readVarint(buf, i, 'varint');
    i = next;
    return r;
  };
  while (i < buf.length) {
    const tag = Number(varint());
    const no = tag >>> 3;
    const wire = tag & 7;
    if (wire === 0) out.push({ no, varint: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      if (i + len > buf.length) throw new ProtobufDecodeError('truncated field');
      out.push({ no, bytes: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 1 || wire === 5) {
      const len = wire === 1 ? 8 : 4;
      if (i + len > buf.length) throw new ProtobufDecodeError('truncated field');
      out.push({ no, fixed: buf.subarray(i, i + len) });
      i += len;
    } else throw new ProtobufDecodeError(`unsupported wire type ${wire}`);
  }
  return out;
}

const str = (f: Field) => (f.bytes ?? Buffer.alloc(0)).toString('utf8');

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/** Go's time.Duration String() of a nanosecond count (`1h2m3.5s`, `0s`). */
function goDuration(ns: bigint): string {
  if (ns === 0n) return '0s';
  const neg = ns < 0n;
  let n = neg ? -ns : ns;
  let out: string;
  if (n < 1_000_000_000n) {
    const [unit, div] = n < 1000n ? ['ns', 1n] : n < 1_000_000n ? ['µs', 1000n] : ['ms', 1_000_000n];
    out = `${trimFraction(n, div)}${unit}`;
  } else {
    const h = n / 3_600_000_000_000n;
    n -= h * 3_600_000_000_000n;
    const m = n / 60_000_000_000n;
    n -= m * 60_000_000_000n;
    out = `${h > 0n ? `${h}h` : ''}${h > 0n || m > 0n ? `${m}m` : ''}${trimFraction(n, 1_000_000_000n)}s`;
  }
  return neg ? `-${out}` : out;
}

function trimFraction(n: bigint, div: bigint): string {
  const whole = n / div;
  const frac = n % div;
  if (frac === 0n) return String(whole);
  const digits = String(div).length - 1;
  return `${whole}.${String(frac).padStart(digits, '0').replace(/0+$/, '')}`;
}

/** RFC 3339 of a Time (whole seconds) or MicroTime (six fraction digits); undefined for the zero time. */
function timestamp(buf: Buffer, micro: boolean): string | undefined {
  const fs = fields(buf);
  const seconds = fs.find((f) => f.no === 1)?.varint;
  const nanos = fs.find((f) => f.no === 2)?.varint;
  if (seconds === undefined && nanos === undefined) return undefined;
  const iso = new Date(Number(BigInt.asIntN(64, seconds ?? 0n)) * 1000).toISOString().slice(0, 19);
  if (!micro) return `${iso}Z`;
  return `${iso}.${String(Math.floor(Number(nanos ?? 0n) / 1000)).padStart(6, '0')}Z`;
}

/** A scalar from its wire form, by proto type. */
function scalar(type: string, f: Field): unknown {
  switch (type) {
    case 'string':
      return str(f);
    case 'bytes':
      return (f.bytes ?? Buffer.alloc(0)).toString('base64');
    case 'bool':
      return f.varint !== undefined && f.varint !== 0n;
    case 'double':
      return f.fixed?.length === 8 ? f.fixed.readDoubleLE(0) : 0;
    case 'float':
      return f.fixed?.length === 4 ? f.fixed.readFloatLE(0) : 0;
    case 'int32':
      return Number(BigInt.asIntN(32, f.varint ?? 0n));
    case 'uint32':
    case 'uint64':
      return Number(f.varint ?? 0n);
    default:
      return Number(BigInt.asIntN(64, f.varint ?? 0n));
  }
}

/** Packed repeated numbers (wire type 2 on a numeric field). */
function unpack(type: string, buf: Buffer): unknown[] {
  if (type === 'double' || type === 'float') {
    const size = type === 'double' ? 8 : 4;
    const out: unknown[] = [];
    for (let i = 0; i + size <= buf.length; i += size)
      out.push(scalar(type, { no: 0, fixed: buf.subarray(i, i + size) }));
    return out;
  }
  const out: unknown[] = [];
  let i = 0;
  while (i < buf.length) {
    const [r, next] = readVarint(buf, i, 'packed varint');
    i = next;
    out.push(scalar(type, { no: 0, varint: r }));
  }
  return out;
}

function isZero(v: unknown): boolean {
  if (v === undefined || v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  return v !== null && typeof v === 'object' && Object.keys(v).length === 0;
}

/** One field's value: a scalar, or a message by its layout (special apimachinery types in their JSON forms). */
function value(type: string, f: Field): unknown {
  if (!PROTOBUF_MESSAGES[type]) return scalar(type, f);
  const buf = f.bytes ?? Buffer.alloc(0);
  switch (type) {
    case `${META}.Time`:
      return timestamp(buf, false);
    case `${META}.MicroTime`:
      return timestamp(buf, true);
    case `${META}.Duration`:
      return goDuration(BigInt.asIntN(64, fields(buf).find((x) => x.no === 1)?.varint ?? 0n));
    case 'k8s.io.apimachinery.pkg.api.resource.Quantity':
      return str(fields(buf).find((x) => x.no === 1) ?? { no: 1 });
    case 'k8s.io.apimachinery.pkg.util.intstr.IntOrString': {
      const fs = fields(buf);
      const kind = fs.find((x) => x.no === 1)?.varint ?? 0n;
      return kind === 1n
        ? str(fs.find((x) => x.no === 3) ?? { no: 3 })
        : Number(BigInt.asIntN(32, fs.find((x) => x.no === 2)?.varint ?? 0n));
    }
    case 'k8s.io.apimachinery.pkg.runtime.RawExtension':
    case `${META}.FieldsV1`: {
      const raw = fields(buf).find((x) => x.no === 1)?.bytes;
      if (!raw || raw.length === 0) return undefined;
      try {
        return JSON.parse(raw.toString('utf8'));
      } catch {
        throw new ProtobufDecodeError(`${type} does not hold JSON`);
      }
    }
    default:
      return message(type, buf);
  }
}

/** Decode a message by its generated layout into JSON, dropping zero values (see the module doc). */
function message(type: string, buf: Buffer): Record<string, unknown> {
  const layout = PROTOBUF_MESSAGES[type];
  if (!layout) throw new ProtobufDecodeError(`no protobuf layout for ${type}`);
  const byNo = new Map(layout.map((row) => [row[0], row]));
  const out: Record<string, unknown> = {};
  for (const f of fields(buf)) {
    const row = byNo.get(f.no);
    if (!row) continue; // unknown fields are skipped, as proto2 decoding keeps them aside
    const [, name, label, ftype] = row;
    if (label === 'm') {
      const kv = fields(f.bytes ?? Buffer.alloc(0));
      const k = kv.find((x) => x.no === 1);
      const v = kv.find((x) => x.no === 2);
      if (out[name] === undefined) out[name] = {};
      const map = out[name] as Record<string, unknown>;
      map[k ? str(k) : ''] = v ? value(ftype, v) : PROTOBUF_MESSAGES[ftype] ? {} : scalar(ftype, { no: 2 });
    } else if (label === 'r') {
      if (out[name] === undefined) out[name] = [];
      const list = out[name] as unknown[];
      if (f.bytes !== undefined && !PROTOBUF_MESSAGES[ftype] && ftype !== 'string' && ftype !== 'bytes')
        for (const x of unpack(ftype, f.bytes)) list.push(x);
      else list.push(value(ftype, f) ?? null);
    } else {
      out[name] = value(ftype, f);
    }
  }
  for (const [k, v] of Object.entries(out)) if (isZero(v) && !Array.isArray(v)) delete out[k];
  for (const [k, v] of Object.entries(out)) if (Array.isArray(v) && v.length === 0) delete out[k];
  return out;
}

/** Decode a protobuf request body into a JSON object. @throws ProtobufDecodeError */
export function decodeProtobufObject(body: Buffer): KObject {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC))
    throw new ProtobufDecodeError('missing k8s protobuf envelope');
  const unknown = fields(body.subarray(4));
  const typeMeta = unknown.find((f) => f.no === 1)?.bytes;
  const tm = typeMeta ? fields(typeMeta) : [];
  const apiVersion = str(tm.find((f) => f.no === 1) ?? { no: 1 });
  const kind = str(tm.find((f) => f.no === 2) ?? { no: 2 });
  const type = PROTOBUF_KINDS[`${apiVersion}/${kind}`];
  if (!type) throw new ProtobufDecodeError(`protobuf bodies of ${apiVersion}/${kind} are not supported`);
  const raw = unknown.find((f) => f.no === 2)?.bytes;
  if (!raw) throw new ProtobufDecodeError('empty protobuf object');
  const obj = message(type, raw);
  return {
    apiVersion,
    kind,
    ...obj,
    metadata: (obj.metadata as Record<string, unknown> | undefined) ?? {},
  } as KObject;
}
