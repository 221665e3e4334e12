import { smokeSuite } from './smoke-lib.mjs';

smokeSuite('e2e-reconcile');
