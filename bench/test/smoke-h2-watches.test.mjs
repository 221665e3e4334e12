import { smokeSuite } from './smoke-lib.mjs';

smokeSuite('h2-watches');
