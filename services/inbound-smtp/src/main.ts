import { runProcess } from '@mailyard/platform';
import { inboundSettings, start } from './index';

void runProcess({
  name: 'inbound-smtp',
  services: { 'inbound-smtp': (ctx) => start(ctx) },
  settings: [(config) => inboundSettings(config, config.env)],
  opsPort: 3005,
});
