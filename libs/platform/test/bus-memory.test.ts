import { createMemoryBus } from '../src/bus/memory';
import { createLogger } from '../src/logger/logger';
import { describeBusContract } from './bus.contract';

const logger = createLogger('bus-memory-test', process.env.TEST_LOG_LEVEL ?? 'error');

describeBusContract('memory', async () => createMemoryBus(logger));
