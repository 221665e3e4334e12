/** A delay in ms, with negative and NaN meaning "now" (`Math.max` would keep NaN). */
export function delayOrZero(ms: number): number {
  return Number.isNaN(ms) || ms < 0 ? 0 : ms;
}
