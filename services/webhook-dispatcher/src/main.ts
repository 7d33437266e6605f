import { runProcess } from '@mailyard/platform';
import { start } from './index';

void runProcess({
  name: 'webhook-dispatcher',
  services: { 'webhook-dispatcher': start },
  opsPort: (config) => config.OPS_PORT ?? 3003,
});
