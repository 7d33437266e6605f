import { runProcess } from '@mailyard/platform';
import { start } from './index';

void runProcess({
  name: 'inbound-smtp',
  services: { 'inbound-smtp': (ctx) => start(ctx) },
  servicePorts: (config) => [config.SMTP_PORT],
  opsPort: (config) => config.OPS_PORT ?? 3004,
});
