// The fault injector lives in ./faults/ (one concept per file). This re-export only keeps imports that
// still name './faults.js' resolving while they move to './faults/index.js'; it adds nothing.
export type { RequestContext, WatchFaults, WatchWriter } from './faults/index.js';
