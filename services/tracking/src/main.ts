import { runProcess } from '@mailyard/platform';
import { start } from './index';

void runProcess({
  name: 'tracking',
  services: { tracking: (ctx) => start(ctx) },
  servicePorts: (config) => [config.TRACKING_PORT],
});
