/**
 * All-in-one launcher: every service in one process (`pnpm start`). With nothing configured it
 * runs on embedded defaults (PGlite in DATA_DIR, in-process bus and kv). The only place that
 * imports several services; services themselves never import each other.
 */
import { start as gateway, gatewaySettings } from '@mailyard/gateway';
import { backfillSettings, start as imapBackfill } from '@mailyard/imap-backfill';
import { inboundSettings, start as inboundSmtp } from '@mailyard/inbound-smtp';
import { runProcess } from '@mailyard/platform';
import { start as send, sendSettings } from '@mailyard/send';
import { start as submission, submissionSettings } from '@mailyard/submission';
import { start as tracking, trackingSettings } from '@mailyard/tracking';
import { dispatcherSettings, start as webhookDispatcher } from '@mailyard/webhook-dispatcher';

void runProcess({
  name: 'mailyard',
  settings: [
    gatewaySettings,
    sendSettings,
    dispatcherSettings,
    trackingSettings,
    backfillSettings,
    inboundSettings,
    submissionSettings,
  ],
  services: {
    send,
    'webhook-dispatcher': webhookDispatcher,
    gateway,
    tracking,
    'imap-backfill': imapBackfill,
    'inbound-smtp': inboundSmtp,
    submission,
  },
  opsPort: 3008,
  servicePorts: (config) => [config.PORT, config.TRACKING_PORT],
});
