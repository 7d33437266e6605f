/**
 * The MIME corpus end to end: every fixture of libs/platform/src/mail/fixtures is sent by swaks
 * to the MX service, stored, parsed by the bus consumer and posted by the webhook dispatcher; the
 * posted `details` must equal fixtures/corpus.ts field by field (plus the fields the MX service
 * supplies, and the Authentication-Results header it adds). DNS is a dnsmasq holding no records:
 * the example senders publish no SPF, DKIM or DMARC, so each verdict is `none`.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingEmailPayload } from '@mailyard/contracts';
import { CORPUS, NOT_A_MESSAGE } from '@mailyard/platform/src/mail/fixtures/corpus';
import { eventually } from '@mailyard/testkit/eventually';
import { type Dnsmasq, startDnsmasq } from '@mailyard/testkit/peers/dnsmasq';
import { REPO_ROOT } from '@mailyard/testkit/process';
import { type InboundHarness, startInbound } from './support/inbound';

jest.setTimeout(120_000);

const DOMAIN = 'corpus.example.com';
const FIXTURES = join(REPO_ROOT, 'libs/platform/src/mail/fixtures');
const tmp = mkdtempSync(join(tmpdir(), 'inbound-mime-'));
let dns: Dnsmasq;
let h: InboundHarness;

beforeAll(async () => {
  dns = await startDnsmasq({});
  h = await startInbound({
    env: { DNS_SERVERS: dns.server, INBOUND_HOSTNAME: 'mx.mailyard.test' },
    domains: [{ domain: DOMAIN, wildcard: true }],
  });
});

afterAll(async () => {
  await h?.stop();
  await dns?.stop();
});

/**
 * Sends the fixture as the whole DATA to `<name>@corpus.example.com` and checks the stored raw
 * message is the fixture byte for byte; resolves with its post. swaks ends DATA with its own
 * CRLF, so it gets the fixture without its last one.
 */
async function deliver(file: string, from: string): Promise<IncomingEmailPayload> {
  const recipient = `${file.replace(/\.eml$/, '')}@${DOMAIN}`;
  const raw = readFileSync(join(FIXTURES, file));
  expect(raw.subarray(-2).toString()).toBe('\r\n');
  const data = join(tmp, file);
  writeFileSync(data, raw.subarray(0, -2));
  const out = await h.swaks([
    '--to',
    recipient,
    '--from',
    from,
    '--ehlo',
    'client.example.org',
    '--data',
    data,
  ]);
  expect(out).toMatch(/<- {2}250 2\.0\.0 Ok: queued as inmsg_/);
  return eventually(
    () =>
      h.posted(DOMAIN).find((p) => (p.success ? p.details.recipient === recipient : false)) ??
      (file === NOT_A_MESSAGE.file ? h.posted(DOMAIN).find((p) => !p.success) : undefined),
    `the post of ${file}`,
  );
}

test.each(Object.keys(CORPUS))('%s: every details field as posted', async (file) => {
  const expected = CORPUS[file]!;
  const from = /<?([^<>\s]+@[^<>\s]+)>?$/.exec(expected.from)?.[1] ?? 'sender@example.org';
  const domain = from.split('@')[1];
  const payload = await deliver(file, from);
  expect(payload).toEqual({
    event: 'INCOMING_EMAIL',
    success: true,
    details: {
      ...expected,
      headers: {
        ...expected.headers,
        'Authentication-Results': [
          'mx.mailyard.test; dkim=none (message not signed); ' +
            `spf=none (mx.mailyard.test: ${domain} does not designate permitted sender hosts) ` +
            `smtp.mailfrom=${from} smtp.helo=client.example.org; dmarc=none header.from=${domain}`,
        ],
      },
      recipient: `${file.replace(/\.eml$/, '')}@${DOMAIN}`,
      'thread-id': '',
      'webhook-id': h.mailerIds[DOMAIN],
      'mailer-id': h.mailerIds[DOMAIN],
      'mailer-service': 'sparkpost',
      'label-ids': [],
    },
  });
});

test(`${NOT_A_MESSAGE.file}: accepted, and posted in the spec's error form`, async () => {
  const payload = await deliver(NOT_A_MESSAGE.file, 'sender@example.org');
  expect(payload).toEqual({
    event: 'INCOMING_EMAIL',
    success: false,
    details: {
      error: NOT_A_MESSAGE.error,
      'mailer-id': h.mailerIds[DOMAIN],
      'webhook-id': h.mailerIds[DOMAIN],
    },
  });
});
