/** GET of one object (and its status, scale and log subresources). */
import { negotiate, sendBody, sendText } from '../http.js';
import type { ResourceRequest } from './context.js';
import { checkContainer } from './pod-subresources.js';
import { renderOne, toScale } from './render.js';

/** get: one object in the negotiated format. */
export async function handleGet(r: ResourceRequest): Promise<void> {
  const { rt, req, res, q, ns, name, sub } = r;
  const { registry } = r.env;
  const fmt = negotiate(String(req.headers.accept ?? ''), {
    table: sub === undefined || sub === 'status',
    partial: true,
  });
  const entry = registry.get(rt, ns, name!);
  const o = registry.view(rt, entry);
  if (sub === 'log') {
    // pod LogLocation: the container is checked first; a pod on no node has no log location, and the
    // streamer then answers an empty body (envtest has no kubelet, so every pod answers so)
    checkContainer(o, name!, q.get('container') ?? '');
    sendText(res, 200, '');
    return;
  }
  if (sub === 'scale') {
    sendBody(res, 200, toScale(rt, o), fmt);
    return;
  }
  if (fmt.kind === 'json' && !rt.fromStorage) sendBody(res, 200, entry.json, fmt);
  else sendBody(res, 200, renderOne(rt, o, fmt, q), fmt);
  return;
}
