/**
 * The resourceVersion rules of a reflector's list (client-go `tools/cache/reflector.go`
 * `relistResourceVersion` and the pagination choice in `reflector.list`).
 */

/**
 * The resourceVersion the next list asks for: `'0'` before anything was seen (any state, served from the API
 * server's watch cache), the last seen resourceVersion after that, and `''` (most recent, a quorum read) once a
 * list at the last seen version was refused as expired or too large.
 */
export function relistResourceVersion(lastSyncRV: string, rvUnavailable: boolean): string {
  if (rvUnavailable) return '';
  return lastSyncRV === '' ? '0' : lastSyncRV;
}

/**
 * The page size of a list at `rv`; 0 means unpaged. A list with a specific resourceVersion and a limit is
 * answered by kube-apiserver as an exact read of the (old) state at that version, so a relist at a specific
 * version is unpaged and is then answered "not older than" it from the watch cache (C38); unless the first
 * list came back paginated (the watch cache is off), in which case every list is paged.
 */
export function listPageLimit(rv: string, paginatedResult: boolean, pageSize: number): number {
  if (paginatedResult) return pageSize;
  return rv !== '' && rv !== '0' ? 0 : pageSize;
}
