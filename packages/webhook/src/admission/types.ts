/**
 * The `admission.k8s.io/v1` wire types (`AdmissionReview`, `AdmissionRequest`, `AdmissionResponse`) as plain
 * JSON, named as in k8s.io/api/admission/v1.
 */
import type { KubeObject } from '@kubeloop/client';

/** What an admission request is about (`admission/v1.Operation`). */
export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** `authentication/v1.UserInfo`: who sent the request the API server is admitting. */
export interface UserInfo {
  readonly username?: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** A `metav1.StatusCause`: one reason a request failed, optionally naming the field (`spec.size`). */
export interface StatusCause {
  readonly reason?: string;
  readonly message?: string;
  readonly field?: string;
}

/** The `metav1.Status` an admission response carries in `result`. */
export interface Status {
  readonly apiVersion?: 'v1';
  readonly kind?: 'Status';
  readonly status?: 'Success' | 'Failure';
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
  readonly details?: {
    readonly name?: string;
    readonly group?: string;
    readonly kind?: string;
    readonly causes?: readonly StatusCause[];
  };
}

/** `admission/v1.AdmissionRequest`: what the API server asks about. `object` and `oldObject` are raw JSON. */
export interface AdmissionRequest<T extends KubeObject = KubeObject> {
  /** Identifies this call; the response must echo it. */
  readonly uid: string;
  readonly kind: { readonly group: string; readonly version: string; readonly kind: string };
  readonly resource: { readonly group: string; readonly version: string; readonly resource: string };
  /** e.g. `status` or `scale`; absent for the main resource. */
  readonly subResource?: string;
  readonly requestKind?: { readonly group: string; readonly version: string; readonly kind: string };
  readonly requestResource?: { readonly group: string; readonly version: string; readonly resource: string };
  readonly requestSubResource?: string;
  /** The object's name; may be empty on CREATE with `generateName`. */
  readonly name?: string;
  /** The object's namespace; absent for cluster-scoped objects. */
  readonly namespace?: string;
  readonly operation: Operation;
  readonly userInfo: UserInfo;
  /** The object after the change (CREATE, UPDATE); absent on DELETE. */
  readonly object?: T | null;
  /** The object before the change (UPDATE, DELETE). */
  readonly oldObject?: T | null;
  /** `true` when the change will not be persisted: a handler must then have no side effects. */
  readonly dryRun?: boolean;
  /** The operation's options (`CreateOptions`, `UpdateOptions`, `DeleteOptions`) as raw JSON. */
  readonly options?: Readonly<Record<string, unknown>> | null;
}

/**
 * `admission/v1.AdmissionResponse`. `patch` is a base64 JSON Patch when `patchType` is `JSONPatch`. The Go
 * field `Result` is `status` on the wire (`json:"status,omitempty"`): a reply with `result` is read by
 * kube-apiserver as a denial "without explanation".
 */
export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: Status;
  readonly patch?: string;
  readonly patchType?: 'JSONPatch';
  readonly auditAnnotations?: Readonly<Record<string, string>>;
  readonly warnings?: readonly string[];
}

/** `admission/v1.AdmissionReview`: the envelope of both the request and the response. */
export interface AdmissionReview {
  readonly apiVersion: 'admission.k8s.io/v1' | 'admission.k8s.io/v1beta1';
  readonly kind: 'AdmissionReview';
  readonly request?: AdmissionRequest;
  readonly response?: AdmissionResponse;
}

/** One JSON Patch (RFC 6902) operation as a mutating response carries it. */
export interface JsonPatchOperation {
  readonly op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  readonly path: string;
  readonly from?: string;
  readonly value?: unknown;
}
