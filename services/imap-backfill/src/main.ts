import { runProcess } from '@mailyard/platform';
import { start } from './index';
import { backfillSettings } from './settings';

void runProcess({
  name: 'imap-backfill',
  services: { 'imap-backfill': (ctx) => start(ctx) },
  settings: [(config) => backfillSettings(config)],
  opsPort: (config) => config.OPS_PORT ?? 3004,
});
