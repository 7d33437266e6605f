/**
 * The bare smtp-server of bench:inbound's `bare_smtp_server` phase, run as its own process so its
 * CPU is measured apart: the same package (root smtp-server, patched as the MX service's) with the
 * options of services/inbound-smtp/src/server.ts that shape the conversation (SIZE limit, no AUTH,
 * STARTTLS offered, no reverse lookup, greeting delay, client limit, timeouts), accepting every
 * recipient and discarding every message. What the SMTP conversation alone costs in Node: the
 * floor under any MX built on this library. Prints `bare smtp-server listening <port>`.
 *
 * Env: BARE_SIZE (25 MiB, the MX default), BARE_MAX_CLIENTS (100), BARE_GREETING_DELAY_MS (0).
 */
import { SMTPServer } from 'smtp-server';

const server = new SMTPServer({
  name: 'mailyard.bench',
  banner: 'Mailyard inbound ESMTP',
  size: Number(process.env.BARE_SIZE ?? 25 * 1024 * 1024),
  maxClients: Number(process.env.BARE_MAX_CLIENTS ?? 100),
  socketTimeout: 60_000,
  closeTimeout: 5_000,
  authOptional: true,
  disabledCommands: ['AUTH'],
  hideSTARTTLS: false,
  disableReverseLookup: true,
  earlyTalkerDelay: Number(process.env.BARE_GREETING_DELAY_MS ?? 0),
  logger: false,
  onData(stream, _session, callback) {
    stream.on('data', () => {});
    stream.on('end', () => {
      if ((stream as unknown as { sizeExceeded?: boolean }).sizeExceeded)
        return callback(Object.assign(new Error('5.3.4 Message too big'), { responseCode: 552 }));
      callback(null, 'Ok');
    });
  },
});

server.listen(0, '127.0.0.1', () => {
  const address = server.server.address();
  console.log(`bare smtp-server listening ${typeof address === 'object' && address ? address.port : 0}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
