/**
 * The MX under attack, on the production path (services/inbound-smtp start(): smtp-server, the
 * store, in-process processing, the webhook dispatcher posting to a real receiver), each attack
 * with an honest message sent meanwhile that must still get 250 and be posted:
 * - DATA streamed far past INBOUND_MAX_MESSAGE_BYTES without SIZE=: the session never holds more
 *   than the limit (the MX's own count of held bytes, and this process's RSS), 552 after the
 *   final dot, nothing stored;
 * - the budget shared by all sessions (INBOUND_MAX_INFLIGHT_BYTES): a message that would pass it
 *   gets 452 4.3.1 (try again), and once the bytes are given back mail is taken again;
 * - header blocks over the caps of header-block.ts, the message's or its MIME parts' together
 *   (part-headers.ts): 552 5.3.4 at the end of DATA, not stored;
 *   within them but over what mailauth may read: accepted and posted, Authentication-Results
 *   `dkim=permerror`; one stored before the check (as by an earlier version) is posted by the
 *   recovery sweep in the error form, never parsed;
 * - recipients: one address 1,000 times (any case) is one stored recipient, one delivery, one
 *   POST; the 101st distinct one gets 452 4.5.3; the 101st RCPT refused for good (550) in one
 *   session closes it with 421 4.7.0;
 * - header names that are Object.prototype members are posted as headers.
 * Bounds are asserted (bytes, counts, SMTP answers), never durations.
 */
import { inboundMessages } from '@mailyard/store';
import { eventually } from '@mailyard/testkit/eventually';
import { type InboundHarness, startInbound } from './support/inbound';
import { openInData, openSession } from './support/smtp-session';

jest.setTimeout(300_000);

const DOMAIN = 'hostile.example.com';
const MAX = 1024 * 1024;

const storedCount = async (h: InboundHarness) =>
  (await h.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM inbound_messages')).rows[0]!.n;

/** A raw session up to the 354 of DATA (no SIZE= announced). */
const intoData = (h: InboundHarness, to: string[], ip = '127.0.0.1') => openInData(h.port, to, ip);

/** Sends an honest message with swaks; resolves once it got 250 (`onAccepted`) and was posted. */
async function honest(h: InboundHarness, subject: string, onAccepted = () => {}): Promise<void> {
  const out = await h.swaks([
    '--to',
    `honest@${DOMAIN}`,
    '--from',
    'alice@sender.example',
    '--header',
    `Subject: ${subject}`,
  ]);
  expect(out).toMatch(/<- {2}250 2\.0\.0 Ok: queued as inmsg_/);
  onAccepted();
  await eventually(
    () => h.posted(DOMAIN).some((p) => p.success && p.details.subject === subject),
    `the honest message "${subject}" posted`,
  );
}

describe('DATA past the size limit, and the budget shared by all sessions', () => {
  let h: InboundHarness;
  beforeAll(async () => {
    h = await startInbound({
      env: { INBOUND_MAX_MESSAGE_BYTES: String(MAX), INBOUND_MAX_INFLIGHT_BYTES: String(2.5 * MAX) },
      domains: [{ domain: DOMAIN, wildcard: true }],
    });
  });
  afterAll(async () => {
    await h?.stop();
  });

  test('300 MB streamed without SIZE=: never more than the limit held, 552 after the dot, honest mail served meanwhile', async () => {
    const before = await storedCount(h);
    const rss0 = process.memoryUsage().rss;
    let rssPeak = rss0;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 20);
    const s = await intoData(h, [`victim@${DOMAIN}`]);
    const line = Buffer.from(`${'x'.repeat(998)}\r\n`);
    const chunk = Buffer.concat(Array.from({ length: 64 }, () => line)); // 64,000 bytes
    const total = 300 * 1024 * 1024;
    let honestDone: Promise<void> | null = null;
    let honestAccepted = false;
    await s.write('Subject: flood\r\n\r\n');
    // at least 300 MB, and on until an honest message on another connection, started after the
    // first 50 MB, got its 250: the flood is under way the whole time it is served
    for (let sent = 0; sent < total || !honestAccepted; sent += chunk.length) {
      await s.write(chunk);
      if (!honestDone && sent > 50 * 1024 * 1024)
        honestDone = honest(h, 'during the flood', () => {
          honestAccepted = true;
        });
      if (sent > 2 * total) throw new Error('the honest message was never accepted during the flood');
    }
    s.send('.');
    expect(await s.reply()).toBe(`552 5.3.4 Message exceeds the size limit of ${MAX} bytes`);
    await honestDone;
    clearInterval(sampler);
    await s.close();
    // the MX's own count: the flood never held more than the limit (the honest message beside it)
    expect(h.held().peak).toBeLessThanOrEqual(MAX + 64 * 1024);
    expect(h.held().bytes).toBe(0);
    // and the process: 300 MB went through, its memory grew by far less
    expect(rssPeak - rss0).toBeLessThan(150 * 1024 * 1024);
    expect(await storedCount(h)).toBe(before + 1); // the honest message only
  });

  test('a message that would pass INBOUND_MAX_INFLIGHT_BYTES gets 452 4.3.1; once the bytes are back mail is taken', async () => {
    const before = await storedCount(h);
    const part = Buffer.from(`${'y'.repeat(998)}\r\n`.repeat(900)); // 900,000 bytes each
    // two sessions hold 1.8 MB between them and stall before their final dot
    const holders = [await intoData(h, [`a@${DOMAIN}`]), await intoData(h, [`b@${DOMAIN}`])];
    for (const s of holders) await s.write(Buffer.concat([Buffer.from('Subject: big\r\n\r\n'), part]));
    await eventually(() => h.held().bytes >= 1_800_000, 'both messages held');
    // a third cannot be held whole within 2.5 MB: refused, try again later
    const third = await intoData(h, [`c@${DOMAIN}`]);
    await third.write(Buffer.concat([Buffer.from('Subject: third\r\n\r\n'), part]));
    third.send('.');
    expect(await third.reply()).toBe('452 4.3.1 Insufficient system storage, try again later');
    expect(h.held().peak).toBeLessThanOrEqual(2.5 * MAX);
    // the holders finish: both stored, their bytes given back
    for (const s of holders) s.send('.');
    for (const s of holders) expect(await s.reply()).toMatch(/^250 2\.0\.0 Ok: queued as inmsg_/);
    await Promise.all([...holders, third].map((s) => s.close()));
    await eventually(() => h.held().bytes === 0, 'every byte given back');
    await honest(h, 'after the budget was full');
    expect(await storedCount(h)).toBe(before + 3);
  });
});

describe('header blocks, recipients, header names', () => {
  let h: InboundHarness;
  beforeAll(async () => {
    h = await startInbound({
      // a short lease: the recovery test below stores a message as an earlier version would
      env: { INBOUND_MAX_MESSAGE_BYTES: String(2 * MAX), INBOUND_RECOVERY_LEASE_MS: '1000' },
      domains: [{ domain: DOMAIN, wildcard: true }],
    });
  });
  afterAll(async () => {
    await h?.stop();
  });

  /** Sends `raw` as one message to `to` over a raw session; resolves with the reply to the dot. */
  async function sendRaw(raw: string, to = `x@${DOMAIN}`): Promise<string> {
    const s = await intoData(h, [to]);
    await s.write(raw.replace(/\r?\n\./g, '\r\n..'));
    s.send('\r\n.');
    const r = await s.reply();
    await s.close();
    return r;
  }

  test.each([
    [
      'the issue: one header folded into 68k one-character lines',
      `X-Folded: a\r\n${' b\r\n'.repeat(68_000)}`,
      'Message header exceeds 10000 lines',
    ],
    [
      'a header block over 512 KB',
      `X-Big: ${'z'.repeat(600 * 1024)}\r\n`,
      'Message header exceeds 524288 bytes',
    ],
    [
      'address fields over 64 KB',
      `To: ${'"a long display name" <a@b.example>,'.repeat(2_000)}\r\n`,
      'Message address fields exceed 65536 bytes',
    ],
    [
      'address fields of 2,100 empty groups',
      `To: ${'g:;'.repeat(2_100)}\r\n`,
      'Message address fields list more than 2000 addresses',
    ],
  ])(
    '%s: 552 5.3.4 at the end of DATA, nothing stored, honest mail served',
    async (_what, fields, reason) => {
      const before = await storedCount(h);
      const answer = sendRaw(`From: a@attacker.example.org\r\nSubject: hostile\r\n${fields}\r\nbody\r\n`);
      await honest(h, `beside: ${reason}`);
      expect(await answer).toBe(`552 5.3.4 ${reason}`);
      expect(await storedCount(h)).toBe(before + 1);
    },
  );

  test('a MIME part whose To holds 128 KB of groups (mailparser reads part headers too): 552 5.3.4, not stored', async () => {
    const before = await storedCount(h);
    const answer = sendRaw(
      'From: a@attacker.example.org\r\nSubject: hostile part\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n' +
        `--b\r\nTo: ${'g:a@b.c;'.repeat(16 * 1024)}\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b--\r\n`,
    );
    await honest(h, 'beside the hostile part');
    expect(await answer).toBe('552 5.3.4 MIME part address fields together exceed 65536 bytes');
    expect(await storedCount(h)).toBe(before + 1);
  });

  test('within the MX caps but over what mailauth may read: accepted, posted with dkim/dmarc permerror', async () => {
    const subject = 'padded header';
    const sigs = Array.from(
      { length: 11 },
      (_, i) => `DKIM-Signature: v=1; a=rsa-sha256; d=s${i}.example; s=k; l=${i}; h=from; bh=x; b=x\r\n`,
    ).join('');
    expect(
      await sendRaw(`From: a@attacker.example.org\r\nSubject: ${subject}\r\n${sigs}\r\nbody\r\n`),
    ).toMatch(/^250 /);
    const posted = await eventually(
      () => h.posted(DOMAIN).find((p) => p.success && p.details.subject === subject),
      'the padded message posted',
    );
    if (!posted.success) throw new Error('expected the success form');
    expect(posted.details.headers['Authentication-Results']?.[0]).toMatch(
      /^mailyard\.local; dkim=permerror \(message header over the verification limits: more than 10 DKIM signatures\); spf=\S+ .*; dmarc=permerror/,
    );
  });

  test('a message over the caps stored before the check (an earlier version) is posted in the error form by the recovery sweep, never parsed', async () => {
    const id = await inboundMessages.store(h.ctx.db, {
      remoteIp: '192.0.2.9',
      helo: 'old.example.org',
      mailFrom: 'a@example.org',
      recipients: [
        { address: `old@${DOMAIN}`, tenantId: h.tenantId, domain: DOMAIN, mailerId: h.mailerIds[DOMAIN]! },
      ],
      raw: Buffer.from(`Subject: old\r\nX-Folded: a\r\n${' b\r\n'.repeat(68_000)}\r\nbody\r\n`),
    });
    const posted = await eventually(
      () =>
        h.posted(DOMAIN).find((p) => !p.success && p.details.error === 'Message header exceeds 10000 lines'),
      'the error form posted by the sweep',
    );
    expect(posted.details['webhook-id']).toBe(h.mailerIds[DOMAIN]);
    const { rows } = await h.ctx.db.query<{ status: string }>(
      'SELECT status FROM inbound_messages WHERE id = $1',
      [id],
    );
    expect(rows[0]!.status).toBe('processed');
  });

  test('one recipient 1,000 times, in any case: one stored recipient, one delivery, one POST', async () => {
    const subject = 'repeated recipient';
    const deliveries = async () =>
      (
        await h.ctx.db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM webhook_deliveries WHERE target_kind = 'inbound'",
        )
      ).rows[0]!.n;
    const before = await deliveries();
    const rcpts = Array.from({ length: 1000 }, (_, i) =>
      i % 2 ? `Dup@${DOMAIN}` : `dup@${DOMAIN.toUpperCase()}`,
    );
    const s = await intoData(h, rcpts);
    await s.write(`Subject: ${subject}\r\n\r\nbody\r\n`);
    s.send('.');
    const reply = await s.reply();
    await s.close();
    expect(reply).toMatch(/^250 2\.0\.0 Ok: queued as inmsg_/);
    const id = reply.split(' ').pop()!;
    await eventually(
      () => h.posted(DOMAIN).some((p) => p.success && p.details.subject === subject),
      'the post',
    );
    const { rows } = await h.ctx.db.query<{ recipients: Array<{ address: string }> }>(
      'SELECT recipients FROM inbound_messages WHERE id = $1',
      [id],
    );
    expect(rows[0]!.recipients.map((r) => r.address)).toEqual([`dup@${DOMAIN}`]);
    expect(await deliveries()).toBe(before + 1);
    await honest(h, 'after the repeated recipient'); // posted after it: no second post of it pending
    expect(h.posted(DOMAIN).filter((p) => p.success && p.details.subject === subject)).toHaveLength(1);
  });

  test('recipients per message: 100 distinct accepted (INBOUND_MAX_RECIPIENTS default), the 101st 452 4.5.3, a repeat still 250', async () => {
    const subject = 'many recipients';
    const s = await openSession(h.port);
    await s.reply();
    await s.exchange([
      ['EHLO client.example.org', /^250 /],
      ['MAIL FROM:<a@example.org>', /^250 /],
      ...Array.from({ length: 100 }, (_, i): [string, RegExp] => [`RCPT TO:<r${i}@${DOMAIN}>`, /^250 /]),
      [`RCPT TO:<r100@${DOMAIN}>`, /^452 4\.5\.3 Too many recipients \(at most 100 per message\)$/],
      [`RCPT TO:<R7@${DOMAIN}>`, /^250 /],
      ['DATA', /^354 /],
    ]);
    await s.write(`Subject: ${subject}\r\n\r\nbody\r\n`);
    s.send('.');
    expect(await s.reply()).toMatch(/^250 /);
    await s.close();
    const posts = await eventually(() => {
      const got = h.posted(DOMAIN).filter((p) => p.success && p.details.subject === subject);
      return got.length >= 100 ? got : null;
    }, '100 posts');
    expect(new Set(posts.map((p) => (p.success ? p.details.recipient : ''))).size).toBe(100);
    await honest(h, 'after many recipients');
    expect(h.posted(DOMAIN).filter((p) => p.success && p.details.subject === subject)).toHaveLength(100);
  });

  test('RCPTs refused for good past INBOUND_MAX_RECIPIENTS (100) in one session: 421 4.7.0 and closed; the 452s of the cap do not count', async () => {
    const s = await openSession(h.port);
    await s.reply();
    await s.exchange([
      ['EHLO client.example.org', /^250 /],
      ['MAIL FROM:<a@example.org>', /^250 /],
      // 100 accepted, then 150 answered 452 4.5.3: none of them a refusal for good
      ...Array.from({ length: 250 }, (_, i): [string, RegExp] => [
        `RCPT TO:<c${i}@${DOMAIN}>`,
        i < 100 ? /^250 / : /^452 4\.5\.3 /,
      ]),
      ['RSET', /^250 /],
      ['MAIL FROM:<a@example.org>', /^250 /],
      ...Array.from({ length: 100 }, (_, i): [string, RegExp] => [
        `RCPT TO:<x${i}@unknown.example.net>`,
        /^550 5\.1\.2 /,
      ]),
    ]);
    s.send('RCPT TO:<x100@unknown.example.net>');
    expect(await s.reply()).toBe('421 4.7.0 Too many refused recipients, closing connection');
    await s.closed;
    await honest(h, 'after the refused recipients');
  });

  test('header names that are Object.prototype members are posted as headers, not as the error form', async () => {
    const names = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'];
    const subject = 'prototype names';
    const out = await h.swaks([
      '--to',
      `proto@${DOMAIN}`,
      '--from',
      'a@example.org',
      '--header',
      `Subject: ${subject}`,
      ...names.flatMap((n) => ['--add-header', `${n}: value of ${n}`]),
    ]);
    expect(out).toMatch(/<- {2}250 /);
    const posted = await eventually(
      () => h.posted(DOMAIN).find((p) => p.success && p.details.subject === subject),
      'the post',
    );
    if (!posted.success) throw new Error('expected the success form');
    for (const n of names)
      expect(Object.getOwnPropertyDescriptor(posted.details.headers, n)?.value).toEqual([`value of ${n}`]);
  });
});
