/**
 * All-in-one launcher: every service in one process (`pnpm start`). With nothing configured it
 * runs on embedded defaults (PGlite in DATA_DIR, in-process bus and kv). The only place that
 * imports several services; services themselves never import each other.
 */
import { start as gateway } from '@mailyard/gateway';
import { start as inboundSmtp } from '@mailyard/inbound-smtp';
import { runProcess } from '@mailyard/platform';
import { start as send } from '@mailyard/send';
import { start as tracking } from '@mailyard/tracking';
import { start as webhookDispatcher } from '@mailyard/webhook-dispatcher';

void runProcess({
  name: 'mailyard',
  services: {
    send,
    'webhook-dispatcher': webhookDispatcher,
    gateway,
    tracking: (ctx) => tracking(ctx),
    'inbound-smtp': (ctx) => inboundSmtp(ctx),
  },
  servicePorts: (config) => [config.PORT, config.TRACKING_PORT],
});
