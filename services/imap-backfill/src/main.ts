import { runProcess } from '@mailyard/platform';
import { start } from './index';
import { backfillSettings } from './settings';

void runProcess({
  settings: [(config) => backfillSettings(config)],
  name: 'imap-backfill',
  services: { 'imap-backfill': (ctx) => start(ctx) },
  opsPort: (config) => config.OPS_PORT ?? 3004,
});
