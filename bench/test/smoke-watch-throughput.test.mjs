import { smokeSuite } from './smoke-lib.mjs';

smokeSuite('watch-throughput');
