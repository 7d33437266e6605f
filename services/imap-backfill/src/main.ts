import { runProcess } from '@mailyard/platform';
import { tuneHeap } from './heap-tuning';
import { start } from './index';
import { backfillSettings } from './settings';

tuneHeap();

void runProcess({
  name: 'imap-backfill',
  services: { 'imap-backfill': start },
  settings: [backfillSettings],
  opsPort: 3004,
});
