import { runProcess } from '@mailyard/platform';
import { start } from './index';
import { trackingSettings } from './settings';

void runProcess({
  settings: [trackingSettings],
  name: 'tracking',
  services: { tracking: start },
  opsPort: 3007,
  servicePorts: (config) => [config.TRACKING_PORT],
});
