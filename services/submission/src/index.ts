import {
  type RunningService,
  type ServiceContext,
  startOutboxRelay,
  storeReadiness,
} from '@mailyard/platform';
import { SendGroupCommit } from '@mailyard/store';
import { createSubmissionServers } from './server';
import { submissionSettings } from './settings';
import { loadCertificate } from './tls-cert';

export { submissionSettings } from './settings';
export { toSendRequest, hasBareLineEnd } from './to-send-request';

/**
 * Starts SMTP submission (docs/submission.md): STARTTLS on SUBMISSION_PORT and implicit TLS on
 * SUBMISSION_TLS_PORT when set; every message accepted by the send acceptance of
 * POST /v1/email/send (libs/store acceptSend, with its group commit), whose outbox rows an outbox
 * relay of this process publishes at once (woken after each commit).
 */
export async function start(ctx: ServiceContext): Promise<RunningService> {
  const { config, logger, db, kv } = ctx;
  const settings = submissionSettings(config);
  const cert = await loadCertificate(settings.tls, settings.dataDir, settings.hostname);
  const relay = startOutboxRelay(ctx);
  const servers = createSubmissionServers({
    db,
    kv,
    logger,
    settings,
    tls: cert,
    accept: {
      db,
      sealer: ctx.sealer,
      group: new SendGroupCommit(db),
      onOutboxWrite: () => relay.notify(),
    },
  });
  const ports = [settings.port, ...(settings.tlsPort !== null ? [settings.tlsPort] : [])];
  const bound: number[] = [];
  for (const [i, server] of servers.entries()) {
    server.on('error', (err) => logger.error('SMTP submission server error', { error: err.message }));
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(ports[i], settings.host, () => {
        server.server.off('error', reject);
        resolve();
      });
    });
    const address = server.server.address();
    bound.push(typeof address === 'object' && address ? address.port : ports[i]!);
  }
  return {
    name: 'submission',
    banner: [
      `SMTP submission smtp://${settings.host}:${bound[0]} (STARTTLS)${bound[1] !== undefined ? `  smtps://${settings.host}:${bound[1]}` : ''}  max ${settings.maxBytes} bytes`,
      ...(cert.selfSigned ? [`submission TLS: self-signed certificate ${cert.selfSigned}`] : []),
    ],
    readiness: storeReadiness(ctx),
    async stop() {
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      await relay.stop();
    },
  };
}
