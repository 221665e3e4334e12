import { smokeSuite } from './smoke-lib.mjs';

smokeSuite('workqueue');
