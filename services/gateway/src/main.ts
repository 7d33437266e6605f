import { runProcess } from '@mailyard/platform';
import { start } from './index';
import { gatewaySettings } from './settings';

void runProcess({
  settings: [gatewaySettings],
  name: 'gateway',
  services: { gateway: start },
  opsPort: 3006,
  servicePorts: (config) => [config.PORT],
});
