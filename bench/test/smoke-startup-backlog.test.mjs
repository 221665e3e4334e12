import { smokeSuite } from './smoke-lib.mjs';

smokeSuite('startup-backlog');
