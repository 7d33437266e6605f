import { runProcess } from '@mailyard/platform';
import { start } from './index';
import { sendSettings } from './settings';

void runProcess({
  settings: [sendSettings],
  name: 'send',
  services: { send: start },
  opsPort: 3002,
});
