/**
 * What every per-verb resource handler gets: the server's collaborators, the resolved resource type, the
 * parsed request, and small helpers shared by the write verbs (field manager, dryRun, warnings).
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '@kubeloop/core';
import type { WebhookAdmission } from '../admission/webhook-admission.js';
import type { UserInfo } from '../auth.js';
import { badRequest, invalid } from '../errors.js';
import type { RequestContext, WatchFaults, WatchWriter } from '../faults/index.js';
import type { Registry } from '../registry.js';
import type { RequestInfo } from '../request-info.js';
import type { ResourceType } from '../resource-type.js';
import type { ReviewEnv } from '../reviews.js';
import type { WatchSet } from '../watch-set.js';

/** What the resource handlers need from the server. */
export interface HandlerEnv {
  readonly registry: Registry;
  readonly faults: { onWatchStart(ctx: RequestContext, writer: WatchWriter): WatchFaults };
  readonly watches: WatchSet;
  readonly bookmarkIntervalMs: number;
  readonly defaultWatchTimeoutMs: number;
  /** Where serviceaccounts/token registers the tokens it mints, and their default audience (the issuer). */
  readonly tokens?: {
    addToken(token: string, options: { user: string; groups: readonly string[]; expiresAt: Date }): void;
    readonly issuer: string;
  };
  /** Evaluates TokenReviews and SubjectAccessReviews (absent: a review is echoed with an empty status). */
  readonly reviews?: ReviewEnv;
  /** Clock of watch deadlines and bookmarks. */
  readonly clock?: Clock;
  /** Unread bytes after which a slow watcher is closed. */
  readonly watchBufferBytes?: number;
  /** Admission webhooks (see admission/); absent: none. */
  readonly admission?: WebhookAdmission;
  /** Who sent the request (for admission's `userInfo`). */
  readonly user?: UserInfo;
}

/** One resource request, resolved: the handler of its verb reads everything from here. */
export interface ResourceRequest {
  readonly env: HandlerEnv;
  readonly rt: ResourceType;
  readonly info: RequestInfo;
  readonly ctx: RequestContext;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly q: URLSearchParams;
  /** The namespace for namespaced kinds (undefined for cluster-scoped ones). */
  readonly ns: string | undefined;
  readonly name: string | undefined;
  readonly sub: string | undefined;
  /** Warnings collected while serving (sent as `Warning: 299` headers). */
  readonly warnings: string[];
}

export function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Field manager of a write: `?fieldManager=` or the User-Agent up to the first `/`. */
export function fieldManagerOf(req: IncomingMessage, q: URLSearchParams): string {
  const fm = q.get('fieldManager');
  if (fm) {
    if (fm.length > 128 || !/^[\x20-\x7e]+$/.test(fm))
      throw invalid('PatchOptions', 'meta.k8s.io', '', [
        {
          type: 'FieldValueInvalid',
          field: 'fieldManager',
          detail: `Invalid value: ${JSON.stringify(fm)}: must consist of printable characters and be at most 128 characters long`,
        },
      ]);
    return fm;
  }
  const ua = String(req.headers['user-agent'] ?? '');
  const m = ua.split('/')[0] ?? '';
  return m || 'unknown';
}

export function dryRunOf(q: URLSearchParams): boolean {
  const all = q.getAll('dryRun');
  if (all.length === 0) return false;
  for (const v of all)
    if (v !== 'All') throw badRequest(`Invalid dry run value: ${JSON.stringify(v)}; supported values: "All"`);
  return true;
}

export function warningHeaders(warnings: string[]): Record<string, string[]> {
  return warnings.length ? { Warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`) } : {};
}
