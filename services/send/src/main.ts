import { runProcess } from '@mailyard/platform';
import { start } from './index';

void runProcess({ name: 'send', services: { send: start }, opsPort: (config) => config.OPS_PORT ?? 3002 });
