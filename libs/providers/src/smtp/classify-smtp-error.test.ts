import {
  TARGET_REFUSED_REASON,
  classifyReply,
  classifySmtpError,
  describeReply,
  enhancedCodeOf,
  localFailure,
} from './classify-smtp-error';

describe('classifySmtpError', () => {
  it('maps 550 5.1.1 to a permanent "address does not exist"', () => {
    const f = classifySmtpError({
      code: 'EENVELOPE',
      responseCode: 550,
      response: '550 5.1.1 <x@example.com>: User unknown',
      command: 'RCPT TO',
    });
    expect(f).toEqual({
      kind: 'permanent',
      responseCode: 550,
      enhancedCode: '5.1.1',
      failedReason: 'Recipient address does not exist',
      providerError: '550 5.1.1 <x@example.com>: User unknown',
      bounceCategory: 'invalid_recipient',
    });
  });

  it('names the bounce category of a reply (libs/contracts classifyBounce); a refused login has none', () => {
    expect(
      classifyReply(
        554,
        '554 5.7.1 Service unavailable; Client host [192.0.2.10] blocked using zen.spamhaus.org',
      ).bounceCategory,
    ).toBe('reputation');
    expect(classifyReply(552, '552 5.2.2 Mailbox full').bounceCategory).toBe('mailbox_full');
    expect(classifyReply(421, '421 4.7.0 Too many connections, try again later').bounceCategory).toBe(
      'rate_limited',
    );
    expect(classifyReply(550, '550 No such user here').bounceCategory).toBe('invalid_recipient');
    expect(classifyReply(535, '535 5.7.8 Authentication credentials invalid')).not.toHaveProperty(
      'bounceCategory',
    );
  });

  it('names dns, tls or unknown for failures without a reply, and nothing for configuration errors', () => {
    expect(classifySmtpError({ code: 'EDNS', message: 'x' }).bounceCategory).toBe('dns');
    expect(classifySmtpError({ code: 'ETLS', message: 'x' }).bounceCategory).toBe('tls');
    expect(classifySmtpError({ code: 'EREQUIRETLS', message: 'x' }).bounceCategory).toBe('tls');
    expect(classifySmtpError({ code: 'ETIMEDOUT', message: 'x' }).bounceCategory).toBe('unknown');
    expect(classifySmtpError({ code: 'ETARGET_UNRESOLVED', message: 'x' }).bounceCategory).toBe('dns');
    expect(classifySmtpError({ code: 'ECONFIG', message: 'x' })).not.toHaveProperty('bounceCategory');
    expect(classifySmtpError({ code: 'EAUTH', message: 'x' })).not.toHaveProperty('bounceCategory');
    expect(classifySmtpError({ code: 'ETARGET_PRIVATE', message: 'x' })).not.toHaveProperty('bounceCategory');
    expect(localFailure('permanent', 'Mailer configuration could not be loaded')).not.toHaveProperty(
      'bounceCategory',
    );
  });

  it('maps a bare 552 by its basic code', () => {
    expect(classifyReply(552, '552 Requested mail action aborted').failedReason).toBe(
      'Mailbox full or message too large',
    );
  });

  it.each([421, 450, 451, 452])('treats %i as temporary', (code) => {
    const f = classifyReply(code, `${code} try again later`);
    expect(f.kind).toBe('temporary');
    expect(f.failedReason).toMatch(/^Temporary failure/);
  });

  it('says "temporary" for a 4xx with a mapped enhanced code', () => {
    expect(classifyReply(452, '452 4.2.2 Mailbox full').failedReason).toBe('Temporary failure: mailbox full');
  });

  it('treats 503 (bad sequence) as temporary', () => {
    expect(classifyReply(503, '503 5.5.1 Bad sequence of commands').kind).toBe('temporary');
  });

  it.each([
    [535, '535 5.7.8 Authentication credentials invalid', 'AUTH PLAIN'],
    [534, '534 5.7.9 Authentication mechanism is too weak', 'AUTH LOGIN'],
    [530, '530 5.7.8 Authentication credentials invalid', 'MAIL FROM'],
  ])('classifies %i as an authentication failure', (code, response, command) => {
    const f = classifySmtpError({ code: 'EAUTH', responseCode: code, response, command });
    expect(f.kind).toBe('auth');
    expect(f.failedReason.startsWith('Authentication')).toBe(true);
  });

  it.each([['530 5.7.0 Must issue a STARTTLS command first'], ['530 5.7.0 Authentication required']])(
    'treats "%s" to MAIL FROM as a permanent configuration failure, not refused credentials',
    (response) => {
      const f = classifySmtpError({ code: 'EENVELOPE', responseCode: 530, response, command: 'MAIL FROM' });
      expect(f.kind).toBe('permanent');
    },
  );

  it('does not deactivate for a temporary auth failure (454)', () => {
    expect(
      classifySmtpError({
        code: 'EAUTH',
        responseCode: 454,
        response: '454 4.7.0 Temporary authentication failure',
        command: 'AUTH PLAIN',
      }).kind,
    ).toBe('temporary');
  });

  it('keeps the raw text when the code is not mapped', () => {
    const f = classifyReply(559, '559 something odd happened');
    expect(f.kind).toBe('permanent');
    expect(f.failedReason).toBe('559 something odd happened');
  });

  it('treats connection problems and timeouts as temporary', () => {
    expect(classifySmtpError({ code: 'ECONNECTION', message: 'connect ECONNREFUSED 127.0.0.1:25' })).toEqual({
      kind: 'temporary',
      failedReason: 'Could not connect to the mail server',
      providerError: 'connect ECONNREFUSED 127.0.0.1:25',
      bounceCategory: 'unknown',
    });
    expect(classifySmtpError({ code: 'ETIMEDOUT', message: 'Greeting never received' }).kind).toBe(
      'temporary',
    );
    expect(classifySmtpError(new Error('socket hang up')).kind).toBe('temporary');
  });

  it('reads enhanced codes only in the right place', () => {
    expect(enhancedCodeOf('550-5.7.1 Blocked')).toBe('5.7.1');
    expect(enhancedCodeOf('550 mailbox 5.1.1 unknown')).toBeUndefined();
    expect(describeReply(550, '5.7.26')).toBe('Sender authentication failed (SPF/DKIM/DMARC)');
  });
});

describe('guarded connect refusals and failures', () => {
  const target = (code: string, extra: object = {}) =>
    Object.assign(new Error(`mx.example.test: ${code}`), { code, ...extra });

  it('a private target is final, an unresolved one final unless DNS did not answer', () => {
    expect(classifySmtpError(target('ETARGET_PRIVATE'))).toEqual({
      kind: 'permanent',
      failedReason: TARGET_REFUSED_REASON,
      providerError: 'mx.example.test: ETARGET_PRIVATE',
    });
    expect(classifySmtpError(target('ETARGET_UNRESOLVED', { temporary: false })).kind).toBe('permanent');
    expect(classifySmtpError(target('ETARGET_UNRESOLVED', { temporary: true })).kind).toBe('temporary');
  });

  it('a failed connection is temporary, a timeout named as one', () => {
    expect(classifySmtpError(target('ETARGET_CONNECT', { causeCode: 'ECONNREFUSED' }))).toMatchObject({
      kind: 'temporary',
      failedReason: 'Could not connect to the mail server',
    });
    expect(classifySmtpError(target('ETARGET_CONNECT', { causeCode: 'ETIMEDOUT' })).failedReason).toBe(
      'Connection to the mail server timed out',
    );
  });
});
describe('mapping tables', () => {
  // The codes the module maps: each must give a non-empty reason of its own (not the raw reply).
  const enhanced = [
    '1.0',
    '1.1',
    '1.2',
    '1.3',
    '1.4',
    '1.6',
    '1.7',
    '1.8',
    '1.10',
    '2.0',
    '2.1',
    '2.2',
    '2.3',
    '2.4',
    '3.0',
    '3.1',
    '3.2',
    '3.4',
    '4.0',
    '4.1',
    '4.2',
    '4.3',
    '4.4',
    '4.5',
    '4.6',
    '4.7',
    '5.0',
    '5.3',
    '6.0',
    '7.0',
    '7.1',
    '7.7',
    '7.8',
    '7.9',
    '7.11',
    '7.23',
    '7.25',
    '7.26',
    '7.27',
  ];
  const basic = [
    421, 432, 450, 451, 452, 454, 455, 500, 501, 502, 503, 504, 521, 530, 534, 535, 550, 551, 552, 553, 554,
    555, 556,
  ];
  const noReply = [
    'ETIMEDOUT',
    'ECONNECTION',
    'ESOCKET',
    'ECONNREFUSED',
    'ECONNRESET',
    'EDNS',
    'ETLS',
    'EREQUIRETLS',
    'EPROTOCOL',
    'EAUTH',
    'ENOAUTH',
    'ECONFIG',
    'EENVELOPE',
    'EMESSAGE',
    'ESTREAM',
    'EABORT',
  ];

  it('describes every mapped enhanced code, permanent as is and temporary with a prefix', () => {
    const reasons = enhanced.map((d) => describeReply(550, `5.${d}`));
    for (const r of reasons) expect(r).toMatch(/^[A-Z]\S* /);
    expect(new Set(reasons).size).toBe(enhanced.length);
    for (const d of enhanced) {
      const permanent = describeReply(550, `5.${d}`)!;
      expect(describeReply(450, `4.${d}`)).toBe(
        `Temporary failure: ${permanent[0]!.toLowerCase()}${permanent.slice(1)}`,
      );
    }
    expect(describeReply(550, '5.9.9')).toBe(describeReply(550));
  });

  it('describes every mapped basic code', () => {
    const reasons = basic.map((c) => describeReply(c));
    for (const r of reasons) expect(r).toMatch(/^[A-Z]\S* /);
    expect(new Set(reasons).size).toBe(basic.length);
    expect(describeReply(599)).toBeUndefined();
  });

  it('gives every known error without a reply its own reason, not the error message', () => {
    const failures = noReply.map((code) => classifySmtpError({ code, message: 'boom' }));
    for (const f of failures) {
      expect(f.failedReason).toMatch(/^[A-Z]\S* /);
      expect(f.providerError).toBe('boom');
    }
    expect(failures.map((f) => f.kind)).toEqual(
      noReply.map((c) =>
        c === 'EAUTH' || c === 'ENOAUTH'
          ? 'auth'
          : c === 'ECONFIG' || c === 'EENVELOPE'
            ? 'permanent'
            : 'temporary',
      ),
    );
  });
});

describe('auth, permanent or temporary', () => {
  it.each([
    [535, '535 5.7.8 Authentication credentials invalid', 'AUTH PLAIN', 'auth'],
    [535, '535 Authentication failed', undefined, 'auth'],
    [534, '534 5.7.9 Mechanism too weak', undefined, 'auth'],
    [550, '550 5.7.8 nope', 'MAIL FROM', 'auth'],
    [550, '550 5.7.9 weak', 'RCPT TO', 'auth'],
    [554, '554 5.7.0 rejected', 'auth login', 'auth'],
    [500, '500 5.5.1 Unrecognized command', 'AUTH LOGIN', 'auth'],
    [454, '454 4.7.0 Temporary authentication failure', 'AUTH PLAIN', 'temporary'],
    [530, '530 5.7.0 Must issue a STARTTLS command first', 'MAIL FROM', 'permanent'],
    [530, '530 5.7.8 Authentication required', 'MAIL FROM', 'auth'],
    [550, '550 5.7.1 Relaying denied', 'RCPT TO', 'permanent'],
    [550, '550 no', 'XAUTH', 'permanent'],
    [503, '503 5.5.1 Bad sequence of commands', 'DATA', 'temporary'],
    [500, '500 5.5.2 Syntax error', 'DATA', 'permanent'],
  ] as const)('%i %s after %s: %s', (code, response, command, kind) => {
    expect(classifyReply(code, response, command).kind).toBe(kind);
  });

  it('prefixes auth reasons that do not say so, and only those', () => {
    expect(classifyReply(554, '554 5.7.0 rejected', 'AUTH LOGIN').failedReason).toBe(
      'Authentication failed: Rejected by the recipient server for security or policy reasons',
    );
    expect(classifyReply(535, '535 5.7.8 bad', 'AUTH PLAIN').failedReason).toBe(
      'Authentication credentials invalid',
    );
    expect(classifyReply(550, '550 5.7.0 policy', 'RCPT TO').failedReason).toBe(
      'Rejected by the recipient server for security or policy reasons',
    );
  });

  it('maps a 500 with an enhanced code as permanent text', () => {
    expect(classifyReply(500, '500 5.5.0 what').failedReason).toBe('Mail protocol error');
  });

  it('trims the reply and reads its codes after leading space', () => {
    const f = classifyReply(550, '  550 5.1.1 gone \r\n');
    expect(f).toMatchObject({ enhancedCode: '5.1.1', providerError: '550 5.1.1 gone' });
    expect(enhancedCodeOf('  550 5.1.1 gone')).toBe('5.1.1');
  });

  it('adds enhancedCode only when the reply has one', () => {
    expect('enhancedCode' in classifyReply(550, '550 no such user')).toBe(false);
  });
});

describe('classifySmtpError without a usable reply', () => {
  it('reads the code from the reply text when responseCode is missing or not a number', () => {
    expect(classifySmtpError({ response: '550 5.1.1 gone' })).toMatchObject({
      kind: 'permanent',
      responseCode: 550,
    });
    expect(classifySmtpError({ responseCode: '550' as never, response: '451 4.3.0 later' })).toMatchObject({
      kind: 'temporary',
      responseCode: 451,
    });
  });

  it('uses responseCode when the text has no code', () => {
    expect(classifySmtpError({ responseCode: 421, response: 'Greeting never received' })).toMatchObject({
      kind: 'temporary',
      responseCode: 421,
      providerError: 'Greeting never received',
    });
  });

  it('treats success codes, a missing reply and a non-text reply as no reply', () => {
    for (const e of [
      { responseCode: 250, response: '250 OK', message: 'odd' },
      { responseCode: 550, message: 'odd' },
      { responseCode: 550, response: 42 as never, message: 'odd' },
    ]) {
      expect(classifySmtpError(e)).toEqual({
        kind: 'temporary',
        failedReason: 'odd',
        providerError: 'odd',
        bounceCategory: 'unknown',
      });
    }
  });

  it('describes errors by message, then code, then "unknown error"', () => {
    expect(classifySmtpError({ message: '  ', code: 'EWEIRD' }).failedReason).toBe('EWEIRD');
    expect(classifySmtpError({}).failedReason).toBe('unknown error');
    expect(classifySmtpError('boom').failedReason).toBe('boom');
    expect(classifySmtpError(null).failedReason).toBe('null');
  });
});
