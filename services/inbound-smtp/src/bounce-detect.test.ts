import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type BounceVerdict,
  autoReplyReason,
  bounceReason,
  classifyFailure,
  classifyRecipient,
  detectBounce,
} from './bounce-detect';
import { readMime } from './report-mime';

const fixture = (name: string) => readMime(readFileSync(join(__dirname, 'fixtures', name)));
const VERP = 'bounce+01JB8W7Y3K5Q9M2N4P6R8T0V1X.1.k3v7q2m5x9z4w6ya@bounces.mailyard.test';
const ORIGINAL = {
  messageId: '<svc_mailer_01JB8W7Y3K5Q9M2N4P6R8T0V1X.1@mailyard.test>',
  returnPath: VERP,
  from: 'Brand News <news@brand.test>',
  subject: 'Spring sale',
  serviceSent: true,
};

function bounce(name: string): Extract<BounceVerdict, { kind: 'bounce' }> {
  const v = detectBounce(fixture(name));
  if (v.kind !== 'bounce') throw new Error(`${name}: ${v.kind} (${v.reason})`);
  return v;
}

describe('RFC 3464 delivery status notifications', () => {
  test('real Postfix DSN, 550 5.1.1 user unknown: hard', () => {
    const v = bounce('postfix-hard.eml');
    expect(v).toEqual({
      kind: 'bounce',
      class: 'hard',
      standard: true,
      recipients: [
        {
          finalRecipient: 'ann@recipient.example',
          originalRecipient: 'ann@recipient.example',
          action: 'failed',
          status: '5.1.1',
          diagnostic:
            '550 5.1.1 <ann@recipient.example>: Recipient address rejected: User unknown in virtual mailbox table',
        },
      ],
      original: ORIGINAL,
    });
    expect(bounceReason(v.class, v.recipients[0]!)).toBe(
      'Hard bounce: 550 5.1.1 <ann@recipient.example>: Recipient address rejected: User unknown in virtual mailbox table',
    );
  });

  test('real Postfix DSN, 554 5.7.1 blocklisted: block', () => {
    const v = bounce('postfix-block.eml');
    expect(v.class).toBe('block');
    expect(v.recipients[0]).toMatchObject({
      finalRecipient: 'bob@recipient.example',
      status: '5.7.1',
      diagnostic: expect.stringMatching(
        /^554 5\.7\.1 Service unavailable; Client host \[192\.0\.2\.10\] blocked/,
      ),
    });
    expect(bounceReason(v.class, v.recipients[0]!)).toMatch(/^Blocked: 554 5\.7\.1 /);
  });

  test('real Postfix DSN, 452 4.2.2 mailbox full returned at once: soft', () => {
    const v = bounce('postfix-soft.eml');
    expect(v.class).toBe('soft');
    expect(v.recipients[0]).toMatchObject({
      finalRecipient: 'cid@recipient.example',
      action: 'failed',
      status: '4.2.2',
    });
    expect(bounceReason(v.class, v.recipients[0]!)).toMatch(/^Soft bounce: 452 4\.2\.2 .*Mailbox full$/);
  });

  test('Postfix delay warning: soft, said to be a delay', () => {
    const v = bounce('postfix-delayed.eml');
    expect(v.class).toBe('soft');
    expect(v.recipients[0]).toMatchObject({
      finalRecipient: 'jim@slow.example',
      action: 'delayed',
      status: '4.4.1',
      diagnostic: 'connect to mx.slow.example[192.0.2.50]:25: Connection timed out',
    });
    expect(bounceReason(v.class, v.recipients[0]!)).toBe(
      'Soft bounce (delivery delayed): 4.4.1 connect to mx.slow.example[192.0.2.50]:25: Connection timed out',
    );
    expect(v.original).toEqual(ORIGINAL);
  });

  test('Gmail: nested human parts, multi-line Diagnostic-Code, headers-only original: hard', () => {
    const v = bounce('gmail.eml');
    expect(v.class).toBe('hard');
    expect(v.standard).toBe(true);
    expect(v.recipients).toEqual([
      {
        finalRecipient: 'ann@gmail.example',
        originalRecipient: '',
        action: 'failed',
        status: '5.1.1',
        diagnostic: expect.stringMatching(
          /^550-5\.1\.1 The email account that you tried to reach does not exist\. .* gsmtp$/,
        ),
      },
    ]);
    expect(v.original).toEqual(ORIGINAL);
  });

  test('a positive DSN (relayed) is not a bounce', () => {
    expect(detectBounce(fixture('delivered-dsn.eml'))).toEqual({
      kind: 'not_bounce',
      reason: 'delivery status without a failure (relayed)',
    });
  });
});

describe('non-standard bounces (text)', () => {
  test('Postfix notice without the MIME report: hard', () => {
    const v = bounce('postfix-plain.eml');
    expect(v).toMatchObject({ class: 'hard', standard: false, original: null });
    expect(v.recipients[0]).toEqual({
      finalRecipient: 'gus@postfix.example',
      originalRecipient: '',
      action: 'failed',
      status: '5.1.1',
      diagnostic:
        '550 5.1.1 <gus@postfix.example>: Recipient address rejected: User unknown in local recipient table',
    });
  });

  test('Exchange NDR (quoted-printable, no delivery-status): hard', () => {
    const v = bounce('exchange-ndr.eml');
    expect(v).toMatchObject({ class: 'hard', standard: false, original: ORIGINAL });
    expect(v.recipients[0]).toMatchObject({
      finalRecipient: 'hal@contoso.example',
      status: '5.1.10',
      diagnostic: '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
    });
  });

  test('Outlook.com NDR, HTML only in base64, block list: block', () => {
    const v = bounce('outlook-block.eml');
    expect(v.class).toBe('block');
    expect(v.recipients[0]).toMatchObject({
      finalRecipient: 'ivy@outlook.example',
      status: '5.7.1',
      diagnostic: expect.stringMatching(
        /^550 5\.7\.1 Unfortunately, messages from \[192\.0\.2\.10\] weren't sent\./,
      ),
    });
  });

  test('Yahoo failure notice, 554 without enhanced status: hard', () => {
    const v = bounce('yahoo.eml');
    expect(v.class).toBe('hard');
    expect(v.recipients[0]).toMatchObject({
      finalRecipient: 'dan@yahoo.example',
      status: '',
      diagnostic: expect.stringMatching(/^554: delivery error: dd .*This mailbox is disabled \(554\.30\)/),
    });
  });

  test('qmail failure notice: hard', () => {
    const v = bounce('qmail.eml');
    expect(v.class).toBe('hard');
    expect(v.recipients[0]).toMatchObject({
      finalRecipient: 'eve@qmail.example',
      status: '5.1.1',
      diagnostic: '550 5.1.1 <eve@qmail.example>... User unknown',
    });
  });

  test('Exim, 552 5.2.2 quota exceeded: soft (despite Auto-Submitted)', () => {
    const v = bounce('exim.eml');
    expect(v.class).toBe('soft');
    expect(v.recipients[0]).toMatchObject({
      finalRecipient: 'fay@exim.example',
      status: '5.2.2',
      diagnostic: '552 5.2.2 fay@exim.example: Mailbox quota exceeded',
    });
  });
});

describe('auto-replies and other mail', () => {
  test.each([
    ['autoreply-rfc3834.eml', 'Auto-Submitted: auto-replied'],
    ['autoreply-outlook.eml', 'subject: Automatic reply: Spring sale'],
    ['autoreply-vacation.eml', 'x-autoreply: yes'],
  ])('%s is an auto-reply, not a bounce', (name, reason) => {
    expect(detectBounce(fixture(name))).toEqual({ kind: 'auto_reply', reason });
  });

  test('a person replying to the return path is neither', () => {
    expect(detectBounce(fixture('human-reply.eml'))).toMatchObject({ kind: 'not_bounce' });
  });

  test('Auto-Submitted: no is not an auto-reply', () => {
    expect(autoReplyReason(new Map([['auto-submitted', ['no']]]))).toBeNull();
  });
});

describe('classifyFailure', () => {
  const c = (status: string, diagnostic: string, action = 'failed') =>
    classifyFailure({ status, diagnostic, action });
  test.each([
    ['5.1.1', '550 5.1.1 user unknown', 'hard'],
    // RFC 5321's generic 550 text, also used for blocks: unknown, so soft (was hard before the
    // bounce categories: only a recognised invalid recipient suppresses now)
    ['5.0.0', '550 Requested action not taken: mailbox unavailable', 'soft'],
    ['', '550 No such user here', 'hard'],
    ['5.7.1', '550 5.7.1 Relaying denied', 'block'],
    [
      '5.7.26',
      '550 5.7.26 Unauthenticated email from brand.test is not accepted due to its DMARC policy',
      'block',
    ],
    ['5.0.0', '554 Message rejected: listed at b.barracudacentral.org', 'block'],
    ['4.7.0', '421 4.7.0 Try again later, closing connection (throttled)', 'soft'],
    ['4.7.1', '450 4.7.1 Greylisted, please try again later', 'soft'],
    ['4.4.7', '', 'soft'],
    ['5.2.2', '552 5.2.2 mailbox full', 'soft'],
    ['', '552 Requested mail action aborted: exceeded storage allocation (over quota)', 'soft'],
    ['', '', 'soft'],
  ])('%s %s -> %s', (status, diagnostic, expected) => {
    expect(c(status, diagnostic)).toBe(expected);
  });
  test('a delayed action is soft whatever the status', () => {
    expect(c('5.1.1', '', 'delayed')).toBe('soft');
  });
});

describe('classifyRecipient: the category of each fixture (libs/contracts classifyBounce)', () => {
  test.each([
    ['postfix-hard.eml', 'invalid_recipient', true, 'hard'],
    ['postfix-block.eml', 'reputation', true, 'block'],
    ['postfix-soft.eml', 'mailbox_full', false, 'soft'],
    ['postfix-delayed.eml', 'unknown', false, 'soft'],
    ['gmail.eml', 'invalid_recipient', true, 'hard'],
    ['postfix-plain.eml', 'invalid_recipient', true, 'hard'],
    ['exchange-ndr.eml', 'invalid_recipient', true, 'hard'],
    ['outlook-block.eml', 'reputation', true, 'block'],
    ['yahoo.eml', 'invalid_recipient', true, 'hard'],
    ['qmail.eml', 'invalid_recipient', true, 'hard'],
    ['exim.eml', 'mailbox_full', true, 'soft'],
  ])('%s -> %s (permanent %s, %s)', (name, category, permanent, klass) => {
    const v = bounce(name);
    expect(classifyRecipient(v.recipients[0]!)).toEqual({ category, permanent, class: klass });
    expect(v.class).toBe(klass);
  });
});

describe('the text patterns, as rewritten to run in linear time (same matches)', () => {
  const DAEMON = 'From: MAILER-DAEMON@mx.example\r\nSubject: Undelivered Mail\r\n';
  const textBounce = (body: string, head = DAEMON) => {
    const v = detectBounce(readMime(Buffer.from(`${head}\r\n${body}`)));
    if (v.kind !== 'bounce') throw new Error(`${v.kind}: ${v.reason}`);
    return v.recipients[0]!;
  };

  test('Gmail: the reply after the colon, on the same line or after blank lines', () => {
    // no enhanced status: only the Gmail pattern reads these replies
    expect(
      textBounce('The response from the remote server was:\n\n\n  550 No such user here\n').diagnostic,
    ).toBe('550 No such user here');
    expect(textBounce('The response from the remote server was: 552 Mailbox full\n').diagnostic).toBe(
      '552 Mailbox full',
    );
  });

  test('a bare reply line after blank lines, indented or not; Yahoo "554:" lines', () => {
    expect(textBounce('could not be delivered\n\n\n   550 5.1.1 user unknown here\n').diagnostic).toBe(
      '550 5.1.1 user unknown here',
    );
    expect(textBounce('\n\n554: delivery error: dd This user does not exist\n').diagnostic).toBe(
      '554: delivery error: dd This user does not exist',
    );
    // a reply code must start its line (after blanks): not found inside a sentence
    expect(textBounce('could not be delivered, see 550 5.1.1 inline\n').diagnostic).toBe('');
  });

  test('Exim: the address on a following line, blank lines and angle brackets allowed', () => {
    const body = 'could not be delivered\n  failed: \n\n   <gone@exim.example>\n   SMTP error\n';
    expect(textBounce(body).finalRecipient).toBe('gone@exim.example');
    // on the same line as failed: it is not the Exim form
    expect(textBounce('could not be delivered\nfailed: <x@exim.example>\n').finalRecipient).toBe('');
  });

  test('Outlook, Gmail and Exchange name the address; an @ in its domain part stays in it', () => {
    expect(textBounce("Your message to a.b@x.example couldn't be delivered.\n").finalRecipient).toBe(
      'a.b@x.example',
    );
    expect(textBounce("Your message to a@b@x.example couldn't be delivered.\n").finalRecipient).toBe(
      'a@b@x.example',
    );
    expect(
      textBounce("delivery error\nYour message wasn't delivered to c@y.example because\n").finalRecipient,
    ).toBe('c@y.example');
    expect(
      textBounce('could not be delivered\nthe following recipients or groups:\n\n  d@z.example (d)\n')
        .finalRecipient,
    ).toBe('d@z.example');
  });

  test('HTML bounces: script and style dropped, tags removed, a tag never spans a <', () => {
    const html = (body: string) => textBounce(body, `${DAEMON}Content-Type: text/html\r\n`);
    expect(
      html('<style>p{}</style><p>could not be delivered</p><div>550 5.1.1 <b>bad</b> user</div>').diagnostic,
    ).toBe('550 5.1.1 bad user');
    expect(html('<script x="1">x()</script>could not be delivered<br>550 5.1.1 gone').diagnostic).toBe(
      '550 5.1.1 gone',
    );
    // an unclosed `<` is text up to the next tag
    expect(html('could not be delivered<br>550 5.1.1 a < b <i>c</i>').diagnostic).toBe('550 5.1.1 a < b c');
  });
});
