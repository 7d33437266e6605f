import { runProcess } from '@mailyard/platform';
import { start } from './index';
import { dispatcherSettings } from './settings';

void runProcess({
  settings: [dispatcherSettings],
  name: 'webhook-dispatcher',
  services: { 'webhook-dispatcher': start },
  opsPort: 3003,
});
