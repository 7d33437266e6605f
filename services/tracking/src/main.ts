import { runProcess } from '@mailyard/platform';
import { start } from './index';
import { trackingSettings } from './settings';

void runProcess({
  settings: [trackingSettings],
  name: 'tracking',
  services: { tracking: (ctx) => start(ctx) },
  servicePorts: (config) => [config.TRACKING_PORT],
});
