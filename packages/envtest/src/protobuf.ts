/**
 * A minimal decoder for Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`): the
 * `k8s\0` envelope around a `runtime.Unknown`, and the few kinds kubectl's generator commands send that way
 * (`kubectl create namespace|configmap|secret`). Field numbers follow k8s.io/api's generated.proto files.
 * Any other kind is refused (the caller answers 415), as is anything malformed.
 */
import type { KObject } from './resource-type.js';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** One decoded field: varint as bigint, length-delimited as bytes. */
type Field = { readonly no: number; readonly varint?: bigint; readonly bytes?: Buffer };

/** Thrown for a body that is not a decodable, supported protobuf object. */
export class ProtobufDecodeError extends Error {
  readonly code = 'ENVTEST_PROTOBUF';
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let r = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length) throw new ProtobufDecodeError('truncated varint');
      const b = buf[i++]!;
      r |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return r;
      shift += 7n;
      if (shift > 63n) throw new ProtobufDecodeError('varint too long');
    }
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
    } else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else throw new ProtobufDecodeError(`unsupported wire type ${wire}`);
  }
  return out;
}

const str = (f: Field) => (f.bytes ?? Buffer.alloc(0)).toString('utf8');

function mapEntries(fs: Field[], no: number, asBytes: boolean): Record<string, string> | undefined {
  const entries = fs.filter((f) => f.no === no && f.bytes);
  if (entries.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const e of entries) {
    const kv = fields(e.bytes!);
    const k = kv.find((f) => f.no === 1);
    const v = kv.find((f) => f.no === 2);
    out[k ? str(k) : ''] = v?.bytes ? (asBytes ? v.bytes.toString('base64') : str(v)) : '';
  }
  return out;
}

function objectMeta(buf: Buffer): Record<string, unknown> {
  const fs = fields(buf);
  const m: Record<string, unknown> = {};
  const s = (no: number, key: string) => {
    const f = fs.find((x) => x.no === no);
    if (f && str(f) !== '') m[key] = str(f);
  };
  s(1, 'name');
  s(2, 'generateName');
  s(3, 'namespace');
  s(5, 'uid');
  s(6, 'resourceVersion');
  const labels = mapEntries(fs, 11, false);
  if (labels) m.labels = labels;
  const annotations = mapEntries(fs, 12, false);
  if (annotations) m.annotations = annotations;
  const fins = fs.filter((f) => f.no === 14).map(str);
  if (fins.length) m.finalizers = fins;
  return m;
}

function sub(fs: Field[], no: number): Field[] {
  const f = fs.find((x) => x.no === no);
  return f?.bytes ? fields(f.bytes) : [];
}

/** Decode a protobuf request body into a JSON object. @throws ProtobufDecodeError */
export function decodeProtobufObject(body: Buffer): KObject {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC))
    throw new ProtobufDecodeError('missing k8s protobuf envelope');
  const unknown = fields(body.subarray(4));
  const typeMeta = sub(unknown, 1);
  const apiVersion = str(typeMeta.find((f) => f.no === 1) ?? { no: 1 });
  const kind = str(typeMeta.find((f) => f.no === 2) ?? { no: 2 });
  const raw = unknown.find((f) => f.no === 2)?.bytes;
  if (!raw) throw new ProtobufDecodeError('empty protobuf object');
  const fs = fields(raw);
  const metaField = fs.find((f) => f.no === 1);
  const metadata = metaField?.bytes ? objectMeta(metaField.bytes) : {};
  const obj: KObject = { apiVersion, kind, metadata };
  const bool = (no: number, key: string) => {
    const f = fs.find((x) => x.no === no);
    if (f?.varint !== undefined) obj[key] = f.varint !== 0n;
  };
  if (apiVersion === 'v1' && kind === 'Namespace') {
    const fins = sub(fs, 2)
      .filter((f) => f.no === 1)
      .map(str);
    if (fins.length) obj.spec = { finalizers: fins };
    return obj;
  }
  if (apiVersion === 'v1' && kind === 'ConfigMap') {
    const data = mapEntries(fs, 2, false);
    if (data) obj.data = data;
    const bin = mapEntries(fs, 3, true);
    if (bin) obj.binaryData = bin;
    bool(4, 'immutable');
    return obj;
  }
  if (apiVersion === 'v1' && kind === 'Secret') {
    const data = mapEntries(fs, 2, true);
    if (data) obj.data = data;
    const type = fs.find((f) => f.no === 3);
    if (type && str(type)) obj.type = str(type);
    const sd = mapEntries(fs, 4, false);
    if (sd) obj.stringData = sd;
    bool(5, 'immutable');
    return obj;
  }
  throw new ProtobufDecodeError(`protobuf bodies of ${apiVersion}/${kind} are not supported`);
}
