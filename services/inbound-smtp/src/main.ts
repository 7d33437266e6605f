import { runProcess } from '@mailyard/platform';
import { start } from './index';

void runProcess({
  name: 'inbound-smtp',
  services: { 'inbound-smtp': (ctx) => start(ctx) },
  opsPort: (config) => config.OPS_PORT ?? 3004,
});
