import { smokeSuite } from './smoke-lib.mjs';

smokeSuite('cache-read');
