import { runProcess } from '@mailyard/platform';
import { inboundSettings, start } from './index';

void runProcess({
  name: 'inbound-smtp',
  services: { 'inbound-smtp': start },
  settings: [inboundSettings],
  opsPort: 3005,
});
