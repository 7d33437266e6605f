/**
 * The MX service on the real servers with a real SMTP client (swaks): each acceptance rule of
 * docs/inbound.md (rejects answered 550 and never stored; accepts posted through the webhook
 * dispatcher to a real HTTP receiver), STARTTLS with the certificate from INBOUND_TLS_CERT/KEY,
 * the SIZE limit announced in EHLO and enforced, many recipients each with their own event,
 * domain matching never fooled by a look-alike or suffix domain (raw sessions: every RCPT answer),
 * a deleted domain refused and an unverified one deferred at RCPT, each delivery traced.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingEmailDetails } from '@mailyard/contracts';
import { traceIdOf } from '@mailyard/platform';
import { domains } from '@mailyard/store';
import { eventually } from '@mailyard/testkit/eventually';
import { REPO_ROOT } from '@mailyard/testkit/process';
import { type InboundHarness, startInbound } from './support/inbound';
import { openSession } from './support/smtp-session';

jest.setTimeout(120_000);

const DOMAIN = 'in.example.com';
const WILD = 'wild.example.com';
/** Deleted, unverified and verified again by the domain tests. */
const GONE = 'gone.example.com';
const FLAKY = 'flaky.example.com';
const CERT = join(REPO_ROOT, '.tmp/test-ca/cert.pem');
let h: InboundHarness;

beforeAll(async () => {
  h = await startInbound({
    env: {
      INBOUND_MAX_MESSAGE_BYTES: '20000',
      INBOUND_TLS_CERT: CERT,
      INBOUND_TLS_KEY: join(REPO_ROOT, '.tmp/test-ca/key.pem'),
    },
    domains: [
      {
        domain: DOMAIN,
        users: [
          { name: 'support' },
          { name: 'sales' },
          { name: 'off', active: false },
          { name: 'strict', strictReplies: true },
        ],
      },
      { domain: WILD, wildcard: true },
      { domain: GONE, users: [{ name: 'support' }] },
      { domain: FLAKY, wildcard: true },
    ],
  });
});

afterAll(async () => {
  await h?.stop();
});

const details = (domain: string): IncomingEmailDetails[] =>
  h.posted(domain).flatMap((p) => (p.success ? [p.details] : []));
const withSubject = (domain: string, subject: string) => details(domain).filter((d) => d.subject === subject);

async function storedCount(): Promise<number> {
  const { rows } = await h.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM inbound_messages');
  return rows[0]!.n;
}

/** Sends one message with `subject` to `to` (comma-separated) and returns swaks' transcript. */
const send = (to: string, subject: string, extra: string[] = []) =>
  h.swaks(['--to', to, '--from', 'a@example.org', '--header', `Subject: ${subject}`, ...extra]);

describe('acceptance rules (docs/inbound.md), in order', () => {
  test('unknown domain: 550 at RCPT (no relaying)', async () => {
    const out = await h.swaks(['--to', 'x@elsewhere.example.org', '--from', 'a@example.org']);
    expect(out).toMatch(/<\*\* 550 5\.1\.2 <x@elsewhere\.example\.org>: .*relay denied/);
  });

  test('rule 1: a wildcard domain accepts every address under it, each posted', async () => {
    for (const user of ['anyone', 'Mixed.Case+tag']) {
      const out = await send(`${user}@${WILD}`, `wild ${user}`);
      expect(out).toMatch(/<- {2}250 2\.0\.0 Ok: queued as inmsg_/);
    }
    const [a, b] = await eventually(() => {
      const got = [withSubject(WILD, 'wild anyone')[0], withSubject(WILD, 'wild Mixed.Case+tag')[0]];
      return got.every(Boolean) ? got : null;
    }, 'both wildcard posts');
    expect(a).toMatchObject({
      recipient: `anyone@${WILD}`,
      'mailer-service': 'sparkpost',
      'webhook-id': h.mailerIds[WILD],
    });
    expect(a!['webhook-id']).toMatch(/^domain_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(b!.recipient).toBe(`mixed.case+tag@${WILD}`);
    expect(a!['mailer-id']).toBe(h.mailerIds[WILD]);
  });

  test('rule 2: an unknown username gets 550 at RCPT and nothing is stored', async () => {
    const before = await storedCount();
    const out = await send(`nobody@${DOMAIN}`, 'rule 2');
    expect(out).toMatch(/<\*\* 550 5\.1\.1 <nobody@in\.example\.com>: no such mailbox/);
    expect(out).not.toMatch(/ DATA\r?\n/);
    expect(await storedCount()).toBe(before);
  });

  test('rule 3: an inactive username gets 550 at RCPT', async () => {
    const out = await send(`off@${DOMAIN}`, 'rule 3');
    expect(out).toMatch(/<\*\* 550 5\.2\.1 <off@in\.example\.com>: mailbox disabled/);
  });

  test('rule 4: strict_replies without the service prefix in In-Reply-To: 550 after DATA, not stored', async () => {
    const before = await storedCount();
    for (const irt of [
      [],
      ['--header', 'In-Reply-To: <x@y>'],
      ['--header', 'In-Reply-To: <svc_other@y>'],
      ['--header', 'In-Reply-To: <x@y> <svc_mailer_1@mailyard.test>'],
    ]) {
      const out = await send(`strict@${DOMAIN}`, 'rule 4', irt);
      expect(out).toMatch(/ -> RCPT TO:<strict@in\.example\.com>\r?\n<- {2}250 /); // accepted at RCPT
      expect(out).toMatch(/<\*\* 550 5\.7\.1 <strict@in\.example\.com>: only replies to messages sent/);
    }
    expect(await storedCount()).toBe(before);
  });

  test('rule 5: strict_replies with a reply to a service message is accepted and posted', async () => {
    const out = await send(`strict@${DOMAIN}`, 'rule 5', [
      '--header',
      'In-Reply-To: <svc_mailer_01ABC@mailyard.test>',
    ]);
    expect(out).toMatch(/<- {2}250 2\.0\.0 Ok: queued/);
    const d = await eventually(() => withSubject(DOMAIN, 'rule 5')[0], 'rule 5');
    expect(d).toMatchObject({
      recipient: `strict@${DOMAIN}`,
      'in-reply-to': '<svc_mailer_01ABC@mailyard.test>',
    });
  });

  test('rule 5: our prefix in any case, with or without the angle bracket', async () => {
    for (const [i, irt] of [
      '<SVC_MAILER_01ABC@MAILYARD.TEST>',
      'svc_mailer_01ABC@mailyard.test',
      ' <Svc_Mailer_1@x>',
    ].entries()) {
      const out = await send(`strict@${DOMAIN}`, `rule 5 form ${i}`, ['--header', `In-Reply-To: ${irt}`]);
      expect(out).toMatch(/<- {2}250 2\.0\.0 Ok: queued/);
    }
    await eventually(
      () => [0, 1, 2].every((i) => withSubject(DOMAIN, `rule 5 form ${i}`).length === 1),
      'the three replies posted',
    );
  });

  test('rule 6: strict_replies false accepts any mail (no In-Reply-To needed)', async () => {
    const out = await send(`Support@${DOMAIN}`, 'rule 6');
    expect(out).toMatch(/<- {2}250 2\.0\.0 Ok: queued/);
    const d = await eventually(() => withSubject(DOMAIN, 'rule 6')[0], 'rule 6');
    expect(d.recipient).toBe(`support@${DOMAIN}`);
  });

  const storedRecipients = async (subject: string) =>
    (
      await h.ctx.db.query<{ recipients: Array<{ address: string }> }>(
        `SELECT recipients FROM inbound_messages WHERE position($1 in convert_from(raw, 'UTF8')) > 0 ORDER BY received_at`,
        [`Subject: ${subject}\r\n`],
      )
    ).rows.map((r) => r.recipients.map((x) => x.address));

  test('several recipients: a strict one never shares a transaction, so no recipient is dropped behind a 250', async () => {
    // strict first: the others are deferred at RCPT (452, sent again in another transaction),
    // the strict one alone gets the message's 550
    const out = await send(`strict@${DOMAIN},sales@${DOMAIN},nobody@${DOMAIN},x@${WILD}`, 'mixed', [
      '--header',
      'In-Reply-To: <x@y>',
    ]);
    expect(out).toMatch(/ -> RCPT TO:<strict@in\.example\.com>\r?\n<- {2}250 /);
    expect(out).toMatch(
      / -> RCPT TO:<sales@in\.example\.com>\r?\n<\*\* 452 4\.5\.3 <sales@in\.example\.com>: send this recipient in a separate transaction/,
    );
    expect(out).toMatch(/ -> RCPT TO:<x@wild\.example\.com>\r?\n<\*\* 452 4\.5\.3 /);
    expect(out).toMatch(/<\*\* 550 5\.1\.1 <nobody@/);
    expect(out).toMatch(/<\*\* 550 5\.7\.1 <strict@in\.example\.com>: only replies/);
    expect(out).not.toMatch(/Ok: queued/);
    expect(await storedRecipients('mixed')).toEqual([]);
    // what a client does with the 452s: the deferred recipients in a transaction of their own
    const again = await send(`sales@${DOMAIN},x@${WILD}`, 'mixed', ['--header', 'In-Reply-To: <x@y>']);
    expect(again).toMatch(/<- {2}250 2\.0\.0 Ok: queued/);
    await eventually(
      () => withSubject(DOMAIN, 'mixed').length + withSubject(WILD, 'mixed').length === 2,
      'both posts',
    );
    expect(await storedRecipients('mixed')).toEqual([[`sales@${DOMAIN}`, `x@${WILD}`]]);

    // others first: the strict one is deferred, the message is accepted for the others; a reply
    // to our mail then reaches the strict one in its own transaction
    const second = await send(`support@${DOMAIN},strict@${DOMAIN}`, 'mixed 2', [
      '--header',
      'In-Reply-To: <svc_mailer_9@mailyard.test>',
    ]);
    expect(second).toMatch(/ -> RCPT TO:<strict@in\.example\.com>\r?\n<\*\* 452 4\.5\.3 /);
    expect(second).toMatch(/<- {2}250 2\.0\.0 Ok: queued/);
    const strictAlone = await send(`strict@${DOMAIN}`, 'mixed 2', [
      '--header',
      'In-Reply-To: <svc_mailer_9@mailyard.test>',
    ]);
    expect(strictAlone).toMatch(/<- {2}250 2\.0\.0 Ok: queued/);
    expect(await storedRecipients('mixed 2')).toEqual([[`support@${DOMAIN}`], [`strict@${DOMAIN}`]]);
    const posted = await eventually(() => {
      const got = withSubject(DOMAIN, 'mixed 2');
      return got.length === 2 ? got : null;
    }, 'both mixed 2 posts');
    expect(posted.map((d) => d.recipient).sort()).toEqual([`strict@${DOMAIN}`, `support@${DOMAIN}`]);
  });
});

describe('the sending domain behind an incoming domain', () => {
  test('deleted: refused at RCPT like a domain that is not ours (no cache keeps it alive)', async () => {
    const before = await storedCount();
    expect(await send(`support@${GONE}`, 'gone before')).toMatch(/<- {2}250 2\.0\.0 Ok: queued/);
    expect(await domains.delete(h.ctx.db, h.tenantId, GONE)).toBe(true);
    const out = await send(`support@${GONE}`, 'gone after');
    expect(out).toMatch(
      /<\*\* 550 5\.1\.2 <support@gone\.example\.com>: we do not accept mail for this domain/,
    );
    expect(out).not.toMatch(/Ok: queued/);
    expect(await storedCount()).toBe(before + 1);
  });

  test('no longer verified: deferred at RCPT (450 4.1.2); verified again: accepted', async () => {
    const setVerified = (v: boolean) =>
      h.ctx.db.query('UPDATE domains SET verified = $3 WHERE tenant_id = $1 AND name = $2', [
        h.tenantId,
        FLAKY,
        v,
      ]);
    await setVerified(false);
    const out = await send(`anyone@${FLAKY}`, 'flaky unverified');
    expect(out).toMatch(
      /<\*\* 450 4\.1\.2 <anyone@flaky\.example\.com>: the domain is not verified at the moment, try again later/,
    );
    expect(out).not.toMatch(/Ok: queued/);
    await setVerified(true);
    expect(await send(`anyone@${FLAKY}`, 'flaky verified')).toMatch(/<- {2}250 2\.0\.0 Ok: queued/);
    await eventually(() => withSubject(FLAKY, 'flaky verified')[0], 'the post once verified');
    expect(withSubject(FLAKY, 'flaky unverified')).toEqual([]);
  });
});

test('each delivery carries a traceparent of the message trace (trace id = the message ULID) and its own webhook-id', async () => {
  const out = await send(`support@${DOMAIN},sales@${DOMAIN}`, 'traced');
  const id = /queued as (inmsg_[0-9A-Z]{26})/.exec(out)![1]!;
  const requests = await eventually(() => {
    const got = h.receiver
      .deliveries(`/hook/${DOMAIN}`)
      .filter((r) => (r.json as { details: { subject?: string } }).details.subject === 'traced');
    return got.length === 2 ? got : null;
  }, 'two traced posts');
  const ulidHex = (u: string) => {
    const c = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    let n = 0n;
    for (const ch of u) n = (n << 5n) | BigInt(c.indexOf(ch));
    return n.toString(16).padStart(32, '0');
  };
  const parents = requests.map((r) => String(r.headers.traceparent));
  for (const t of parents) expect(t).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  expect(parents.map((t) => traceIdOf(t))).toEqual([ulidHex(id.slice(6)), ulidHex(id.slice(6))]);
  expect(new Set(parents).size).toBe(2); // a span per delivery
  const ids = requests.map((r) => String(r.headers['webhook-id']));
  expect(ids[0]).toMatch(/^whd_/);
  expect(new Set(ids).size).toBe(2);
});

test('STARTTLS serves the certificate from INBOUND_TLS_CERT (verified by swaks); AUTH is not offered', async () => {
  const out = await send(`support@${DOMAIN}`, 'over tls', ['--tls', '--tls-verify', '--tls-ca-path', CERT]);
  expect(out).toMatch(/<- {2}250-STARTTLS/);
  expect(out).not.toMatch(/250[ -]AUTH/);
  expect(out).toMatch(/TLS started/);
  expect(out).toMatch(/<~ {2}250 2\.0\.0 Ok: queued/);
  await eventually(() => withSubject(DOMAIN, 'over tls')[0], 'tls post');
  // verified against the system CAs instead, the same certificate is refused: the check is real
  const wrong = await send(`support@${DOMAIN}`, 'tls other ca', [
    '--tls',
    '--tls-verify',
    '--tls-ca-path',
    '/etc/ssl/certs/ca-certificates.crt',
  ]);
  expect(wrong).toMatch(/TLS startup failed.*certificate verify failed/i);
  expect(wrong).not.toMatch(/<~ {2}250 2\.0\.0 Ok: queued/);
});

test('SIZE is announced in EHLO; a bigger message gets 552 and is not stored', async () => {
  const before = await storedCount();
  const out = await send(`support@${DOMAIN}`, 'too big', ['--body', 'x'.repeat(30_000)]);
  expect(out).toMatch(/<- {2}250[ -]SIZE 20000/);
  expect(out).toMatch(/<\*\* 552 5\.3\.4 Message exceeds the size limit of 20000 bytes/);
  expect(await storedCount()).toBe(before);
  // just under the limit is fine
  const ok = await send(`support@${DOMAIN}`, 'just fits', ['--body', 'y'.repeat(19_000)]);
  expect(ok).toMatch(/<- {2}250 2\.0\.0 Ok: queued/);
  const d = await eventually(() => withSubject(DOMAIN, 'just fits')[0], 'the post under the limit');
  expect(d['body-plain']).toContain('y'.repeat(19_000));
});

test('many recipients: each gets its own event with the same parsed message', async () => {
  const raw = readFileSync(join(REPO_ROOT, 'libs/platform/src/mail/fixtures/attachments.eml'));
  const dataFile = join(mkdtempSync(join(tmpdir(), 'inbound-')), 'attachments.eml');
  writeFileSync(dataFile, raw);
  const wild = Array.from({ length: 20 }, (_, i) => `r${i}@${WILD}`);
  const out = await h.swaks([
    '--to',
    [`support@${DOMAIN}`, `sales@${DOMAIN}`, ...wild].join(','),
    '--from',
    'billing@example.org',
    '--data',
    `@${dataFile}`,
  ]);
  expect(out).toMatch(/<- {2}250 2\.0\.0 Ok: queued/);
  const events = await eventually(() => {
    const all = [...details(DOMAIN), ...details(WILD)].filter((e) => e.subject === 'Invoice');
    return all.length >= 22 ? all : null;
  }, '22 invoice posts');
  expect(events.map((e) => e.recipient).sort()).toEqual(
    [`sales@${DOMAIN}`, `support@${DOMAIN}`, ...wild].sort(),
  );
  for (const e of events) {
    expect(e['mailer-id']).toBe(h.mailerIds[e.recipient.endsWith(WILD) ? WILD : DOMAIN]);
    expect(e['webhook-id']).toBe(e['mailer-id']);
    expect(e['user-agent']).toBe('BillingBot 2.1');
    expect(e.files.map((f) => f.filename)).toEqual(['invoice.pdf', 'notes.txt']);
  }
  // one stored message, 22 deliveries
  const { rows } = await h.ctx.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM inbound_messages WHERE position('Subject: Invoice' in convert_from(raw, 'UTF8')) > 0`,
  );
  expect(rows[0]!.n).toBe(1);
});

describe('domain matching: look-alike and suffix domains are never ours', () => {
  /** The reply to `RCPT TO:<address>` in a fresh transaction (SMTPUTF8 announced). */
  async function rcpt(addresses: string[]): Promise<string[]> {
    const s = await openSession(h.port);
    await s.reply();
    await s.exchange([
      ['EHLO client.example.org', /^250 /],
      ['MAIL FROM:<a@example.org> SMTPUTF8', /^250 /],
    ]);
    const replies: string[] = [];
    for (const a of addresses) {
      s.send(`RCPT TO:<${a}>`);
      replies.push(await s.reply());
    }
    s.send('QUIT');
    await s.close();
    return replies;
  }

  // in.example.com has users (support), wild.example.com takes every local part; the bounce
  // domain is SERVICE_DOMAIN (mailyard.local), where fbl@ is always accepted
  const LOOKALIKES = [
    'support@evil-in.example.com',
    'support@xin.example.com',
    'support@in.example.com.evil.net',
    'support@in.example.co',
    'support@in.example.com.',
    'support@n.example.com',
    'support@example.com',
    'support@in-example.com',
    'support@inexample.com',
    'support@in.exаmple.com', // Cyrillic а
    'support@in.xn--exmple-4nf.com', // the same as an A-label
    'support@ｉn.example.com', // fullwidth i (IDNA maps it to ASCII; we do not)
    'anyone@evil-wild.example.com',
    'anyone@xwild.example.com',
    'anyone@sub.wild.example.com',
    'anyone@wild.example.com.evil.net',
    'anyone@wild.example.com.',
    'anyone@wіld.example.com', // Cyrillic і
    'fbl@evil-mailyard.local',
    'fbl@xmailyard.local',
    'fbl@mailyard.local.evil.net',
    'fbl@sub.mailyard.local',
    'fbl@mailyard.local.',
  ];

  test('each look-alike is refused at RCPT, never accepted', async () => {
    const replies = await rcpt(LOOKALIKES);
    for (const [i, reply] of replies.entries()) {
      const address = LOOKALIKES[i]!;
      // a trailing dot is no address syntax at all (smtp-server, 501); every other look-alike
      // reaches the acceptance policy and is not our domain: relay denied
      expect(`${address} -> ${reply}`).toMatch(
        address.endsWith('.')
          ? / -> 501 Error: Bad recipient address syntax$/
          : / -> 550 5\.1\.2 <.*>: we do not accept mail for this domain \(relay denied\)$/,
      );
    }
  });

  test('the real domains in any letter case are accepted (the refusals above are not blanket ones)', async () => {
    expect(await rcpt(['support@IN.Example.COM', 'Anyone@WILD.example.com', 'FBL@MAILYARD.LOCAL'])).toEqual([
      expect.stringMatching(/^250 /),
      expect.stringMatching(/^250 /),
      expect.stringMatching(/^250 /),
    ]);
  });

  test('a message to look-alikes only is never stored or posted', async () => {
    const before = await storedCount();
    const out = await h.swaks([
      '--to',
      'support@in.example.com.evil.net,anyone@sub.wild.example.com',
      '--from',
      'a@example.org',
    ]);
    expect(out).toMatch(/<\*\* 550 5\.1\.2 /);
    expect(out).not.toMatch(/<- {2}250 2\.0\.0 Ok: queued/);
    expect(await storedCount()).toBe(before);
  });
});
