import { runProcess } from '@mailyard/platform';
import { start } from './index';

void runProcess({
  name: 'imap-backfill',
  services: { 'imap-backfill': (ctx) => start(ctx) },
  opsPort: (config) => config.OPS_PORT ?? 3004,
});
