/** Decoding a create/update body: content type, type meta check against the resource, fieldValidation. */

import type { IncomingMessage } from 'node:http';
import { badRequest, unsupportedMediaType } from '../errors.js';
import { applyFieldValidation } from '../field-validation.js';
import { contentTypeOf, decodeBody } from '../http.js';
import { decodeProtobufObject, PROTOBUF_DECODABLE_KINDS, ProtobufDecodeError } from '../protobuf.js';
import { apiVersionOf, type KObject, type ResourceType } from '../resource-type.js';
import { goDecodeErrorOf } from '../schema/go-decode.js';
import { rootModel } from '../schema/schemas.js';
import { isObj } from './context.js';

/** Decode a create/update body, check its type meta against the resource, apply fieldValidation. */
export function decodeObject(
  rt: ResourceType,
  req: IncomingMessage,
  body: Buffer,
  q: URLSearchParams,
  warnings: string[],
): KObject {
  const ct = contentTypeOf(req);
  // kube-apiserver lists protobuf for every built-in kind; envtest lists it only where it can decode it, so a
  // 415 never names the very media type it just refused (custom resources keep the server's list)
  const protobuf = rt.crdName !== undefined || PROTOBUF_DECODABLE_KINDS.has(`${apiVersionOf(rt)}/${rt.kind}`);
  const accepted = ['application/json', 'application/yaml'];
  if (protobuf) accepted.push('application/vnd.kubernetes.protobuf');
  let v: unknown;
  if (ct === 'application/vnd.kubernetes.protobuf') {
    // kubectl's generator commands send protobuf; envtest decodes the kinds of PROTOBUF_DECODABLE_KINDS
    try {
      v = decodeProtobufObject(body);
    } catch (e) {
      if (e instanceof ProtobufDecodeError) throw unsupportedMediaType(accepted);
      throw e;
    }
  } else {
    if (ct !== '' && ct !== 'application/json' && ct !== 'application/yaml' && ct !== '*/*')
      throw unsupportedMediaType(accepted);
    v = decodeBody(body, ct, `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}`);
  }
  if (!isObj(v))
    throw badRequest(
      `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: Object 'Kind' is missing in '${body.toString('utf8').slice(0, 200)}'`,
    );
  const o = v as KObject;
  if (o.kind !== undefined && o.kind !== rt.kind && !(rt.fromStorage && o.kind === rt.kind))
    throw badRequest(
      `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: no kind "${String(o.kind)}" is registered for version "${String(o.apiVersion)}" in scheme`,
    );
  if (o.apiVersion !== undefined && o.apiVersion !== apiVersionOf(rt))
    throw badRequest(
      `the API version in the data (${String(o.apiVersion)}) does not match the expected API version (${apiVersionOf(rt)})`,
    );
  // encoding/json fails the decode on a value of the wrong JSON type or a `[]byte` field that is not base64,
  // before any field validation
  const bytesError = bytesErrorOf(rt, o, ct === 'application/json' || ct === '' ? body : undefined);
  if (bytesError)
    throw badRequest(
      `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: ${bytesError}`,
    );
  applyFieldValidation(rt, o, q, warnings);
  return o;
}

/**
 * The Go decode error of a built-in object: a JSON type error or a `[]byte` field that is not base64 (see
 * `schema/go-decode.ts`); undefined for custom resources and objects that decode. `rawJson`: the JSON body `o`
 * was parsed from, so integer fields see number literals as written (`3.0`).
 */
export function bytesErrorOf(rt: ResourceType, o: KObject, rawJson?: Buffer): string | undefined {
  const modelName = rt.crdName === undefined ? rootModel(rt.group, rt.version, rt.kind) : undefined;
  return modelName ? goDecodeErrorOf(modelName, o, rawJson?.toString('utf8')) : undefined;
}
