/**
 * A minimal decoder for Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`): the
 * `k8s\0` envelope around a `runtime.Unknown`, and the few kinds kubectl's generator commands send that way
 * (`kubectl create namespace|configmap|secret|deployment|service`). Field numbers follow k8s.io/api's generated.proto files.
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

function strField(fs: Field[], no: number): string | undefined {
  const f = fs.find((x) => x.no === no);
  return f?.bytes && f.bytes.length > 0 ? str(f) : undefined;
}

function intField(fs: Field[], no: number, keepZero = false): number | undefined {
  const f = fs.find((x) => x.no === no);
  if (f?.varint === undefined) return undefined;
  const n = Number(BigInt.asIntN(64, f.varint));
  return n === 0 && !keepZero ? undefined : n;
}

function repeatedStr(fs: Field[], no: number): string[] | undefined {
  const out = fs.filter((f) => f.no === no).map(str);
  return out.length ? out : undefined;
}

function setIf(o: Record<string, unknown>, key: string, v: unknown): void {
  if (v !== undefined) o[key] = v;
}

/** IntOrString {type=1 (0 int, 1 string), intVal=2, strVal=3}. */
function intOrString(buf: Buffer): number | string {
  const fs = fields(buf);
  return intField(fs, 1) === 1 ? (strField(fs, 3) ?? '') : (intField(fs, 2, true) ?? 0);
}

/** core/v1 Container: name=1 image=2 command=3 args=4 workingDir=5 ports=6 env=7 imagePullPolicy=14. */
function container(buf: Buffer): Record<string, unknown> {
  const fs = fields(buf);
  const c: Record<string, unknown> = {};
  setIf(c, 'name', strField(fs, 1));
  setIf(c, 'image', strField(fs, 2));
  setIf(c, 'command', repeatedStr(fs, 3));
  setIf(c, 'args', repeatedStr(fs, 4));
  setIf(c, 'workingDir', strField(fs, 5));
  const ports = fs
    .filter((f) => f.no === 6 && f.bytes)
    .map((f) => {
      const pf = fields(f.bytes!);
      const p: Record<string, unknown> = {};
      setIf(p, 'name', strField(pf, 1));
      setIf(p, 'hostPort', intField(pf, 2));
      setIf(p, 'containerPort', intField(pf, 3, true));
      setIf(p, 'protocol', strField(pf, 4));
      return p;
    });
  if (ports.length) c.ports = ports;
  const env = fs
    .filter((f) => f.no === 7 && f.bytes)
    .map((f) => {
      const ef = fields(f.bytes!);
      const e: Record<string, unknown> = { name: strField(ef, 1) ?? '' };
      setIf(e, 'value', strField(ef, 2));
      return e;
    });
  if (env.length) c.env = env;
  setIf(c, 'imagePullPolicy', strField(fs, 14));
  return c;
}

/** PodTemplateSpec {metadata=1, spec=2}; PodSpec: containers=2 restartPolicy=3 dnsPolicy=6 nodeSelector=7 serviceAccountName=8 nodeName=10. */
function podTemplate(buf: Buffer): Record<string, unknown> {
  const fs = fields(buf);
  const meta = fs.find((f) => f.no === 1)?.bytes;
  const spec = sub(fs, 2);
  const ps: Record<string, unknown> = {
    containers: spec.filter((f) => f.no === 2 && f.bytes).map((f) => container(f.bytes!)),
  };
  setIf(ps, 'restartPolicy', strField(spec, 3));
  setIf(ps, 'dnsPolicy', strField(spec, 6));
  setIf(ps, 'nodeSelector', mapEntries(spec, 7, false));
  setIf(ps, 'serviceAccountName', strField(spec, 8));
  setIf(ps, 'nodeName', strField(spec, 10));
  return { metadata: meta ? objectMeta(meta) : {}, spec: ps };
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
  if (apiVersion === 'apps/v1' && kind === 'Deployment') {
    // DeploymentSpec: replicas=1 selector=2 template=3 strategy=4 minReadySeconds=5 revisionHistoryLimit=6 paused=7 progressDeadlineSeconds=9
    const spec = sub(fs, 2);
    const o: Record<string, unknown> = {};
    setIf(o, 'replicas', intField(spec, 1, true));
    const sel = spec.find((f) => f.no === 2)?.bytes;
    if (sel) o.selector = { matchLabels: mapEntries(fields(sel), 1, false) ?? {} };
    const tmpl = spec.find((f) => f.no === 3)?.bytes;
    if (tmpl) o.template = podTemplate(tmpl);
    const strategy = sub(spec, 4);
    setIf(o, 'strategy', strField(strategy, 1) ? { type: strField(strategy, 1) } : undefined);
    setIf(o, 'minReadySeconds', intField(spec, 5));
    setIf(o, 'revisionHistoryLimit', intField(spec, 6, true));
    setIf(o, 'progressDeadlineSeconds', intField(spec, 9, true));
    obj.spec = o;
    return obj;
  }
  if (apiVersion === 'v1' && kind === 'Service') {
    // ServiceSpec: ports=1 selector=2 clusterIP=3 type=4; ServicePort: name=1 protocol=2 port=3 targetPort=4 nodePort=5
    const spec = sub(fs, 2);
    const o: Record<string, unknown> = {};
    const ports = spec
      .filter((f) => f.no === 1 && f.bytes)
      .map((f) => {
        const pf = fields(f.bytes!);
        const p: Record<string, unknown> = {};
        setIf(p, 'name', strField(pf, 1));
        setIf(p, 'protocol', strField(pf, 2));
        setIf(p, 'port', intField(pf, 3, true));
        const tp = pf.find((x) => x.no === 4)?.bytes;
        if (tp) p.targetPort = intOrString(tp);
        setIf(p, 'nodePort', intField(pf, 5));
        return p;
      });
    if (ports.length) o.ports = ports;
    setIf(o, 'selector', mapEntries(spec, 2, false));
    setIf(o, 'clusterIP', strField(spec, 3));
    setIf(o, 'type', strField(spec, 4));
    obj.spec = o;
    return obj;
  }
  throw new ProtobufDecodeError(`protobuf bodies of ${apiVersion}/${kind} are not supported`);
}
