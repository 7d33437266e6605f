import { SERVICE_MESSAGE_ID_PREFIX } from '@mailyard/contracts';
import {
  decideAfterData,
  decideRecipient,
  decideRecipientCount,
  decideRecipientMix,
  decideServiceRecipient,
  serviceAddressesOn,
  splitRecipient,
} from './acceptance';

const a = 'user@in.example.com';

describe('decideRecipient (acceptance rules 1-3, unknown domain)', () => {
  test('unknown domain is rejected: no relaying', () => {
    expect(decideRecipient(a, null)).toMatchObject({
      accept: false,
      code: 550,
      message: expect.stringMatching(/^5\.1\.2 /),
    });
  });
  test('rule 1: wildcard accepts any address, even an inactive configured one', () => {
    expect(decideRecipient(a, { wildcard: true, verified: true, address: null })).toEqual({
      accept: true,
      strictReplies: false,
    });
    expect(
      decideRecipient(a, { wildcard: true, verified: true, address: { active: false, strictReplies: true } }),
    ).toEqual({
      accept: true,
      strictReplies: false,
    });
  });
  test('rule 2: username not configured', () => {
    expect(decideRecipient(a, { wildcard: false, verified: true, address: null })).toMatchObject({
      accept: false,
      message: expect.stringMatching(/^5\.1\.1 .*no such mailbox/),
    });
  });
  test('rule 3: inactive username', () => {
    expect(
      decideRecipient(a, {
        wildcard: false,
        verified: true,
        address: { active: false, strictReplies: false },
      }),
    ).toMatchObject({
      accept: false,
      message: expect.stringMatching(/^5\.2\.1 /),
    });
  });
  test('a sending domain not verified now is deferred (450 4.1.2), before any other rule', () => {
    for (const route of [
      { wildcard: true, verified: false, address: null },
      { wildcard: false, verified: false, address: { active: true, strictReplies: false } },
      { wildcard: false, verified: false, address: null },
    ])
      expect(decideRecipient(a, route)).toEqual({
        accept: false,
        code: 450,
        message: '4.1.2 <user@in.example.com>: the domain is not verified at the moment, try again later',
      });
  });
  test('active username accepts, carrying strict_replies', () => {
    expect(
      decideRecipient(a, { wildcard: false, verified: true, address: { active: true, strictReplies: true } }),
    ).toEqual({
      accept: true,
      strictReplies: true,
    });
  });
});

describe('decideAfterData (rules 4-6)', () => {
  test('rule 4: strict and In-Reply-To missing or foreign', () => {
    expect(decideAfterData(a, true, '')).toMatchObject({ accept: false, code: 550 });
    expect(decideAfterData(a, true, '<other@x>')).toMatchObject({ accept: false, code: 550 });
    expect(decideAfterData(a, true, '<other_svc_mailer_1@x>')).toMatchObject({ accept: false });
  });
  test('rule 5: strict and a reply to our message', () => {
    expect(decideAfterData(a, true, ' <svc_mailer_01J@mailyard.test>')).toEqual({ accept: true });
  });
  test('rule 6: not strict', () => {
    expect(decideAfterData(a, false, '')).toEqual({ accept: true });
  });
});

test('splitRecipient lowercases and refuses malformed addresses', () => {
  expect(splitRecipient('Bob.X@IN.Example.com')).toEqual({ username: 'bob.x', domain: 'in.example.com' });
  expect(splitRecipient('@x.com')).toBeNull();
  expect(splitRecipient('bob@')).toBeNull();
  expect(splitRecipient('bob')).toBeNull();
});

describe('decideServiceRecipient (the bounce domain)', () => {
  test('a verified service address is accepted, never with strict replies', () => {
    for (const kind of ['bounce', 'feedback', 'unsubscribe', 'dmarc', 'tls_rpt'] as const)
      expect(decideServiceRecipient('x@b.test', kind)).toEqual({ accept: true, strictReplies: false });
  });
  test('on SERVICE_DOMAIN (when it is not the bounce domain) only the report addresses exist', () => {
    expect(serviceAddressesOn('b.test', 'b.test', 's.test')).toBe('all');
    expect(serviceAddressesOn('s.test', 'b.test', 's.test')).toBe('reports');
    expect(serviceAddressesOn('s.test', 's.test', 's.test')).toBe('all');
    expect(serviceAddressesOn('tenant.test', 'b.test', 's.test')).toBeNull();
    expect(serviceAddressesOn('sub.s.test', 'b.test', 's.test')).toBeNull();
    for (const kind of ['dmarc', 'tls_rpt'] as const)
      expect(decideServiceRecipient('x@s.test', kind, 'reports')).toEqual({
        accept: true,
        strictReplies: false,
      });
    for (const kind of ['bounce', 'feedback', 'unsubscribe', null] as const)
      expect(decideServiceRecipient('x@s.test', kind, 'reports')).toMatchObject({ accept: false, code: 550 });
  });
  test('anything else on the bounce domain is 550', () => {
    expect(decideServiceRecipient('bounce+forged@b.test', null)).toMatchObject({
      accept: false,
      code: 550,
      message: '5.1.1 <bounce+forged@b.test>: no such mailbox',
    });
  });
});

describe('exact replies (what the sending MTA reads)', () => {
  test('each rejection text names the address and its enhanced status', () => {
    expect(decideRecipient(a, null)).toEqual({
      accept: false,
      code: 550,
      message: '5.1.2 <user@in.example.com>: we do not accept mail for this domain (relay denied)',
    });
    expect(decideRecipient(a, { wildcard: false, verified: true, address: null })).toEqual({
      accept: false,
      code: 550,
      message: '5.1.1 <user@in.example.com>: no such mailbox',
    });
    expect(
      decideRecipient(a, {
        wildcard: false,
        verified: true,
        address: { active: false, strictReplies: true },
      }),
    ).toEqual({
      accept: false,
      code: 550,
      message: '5.2.1 <user@in.example.com>: mailbox disabled, not accepting messages',
    });
    expect(decideAfterData(a, true, '<x@y>')).toEqual({
      accept: false,
      code: 550,
      message: '5.7.1 <user@in.example.com>: only replies to messages sent by this service are accepted',
    });
  });

  test('an active address without strict replies accepts with strictReplies false', () => {
    expect(
      decideRecipient(a, {
        wildcard: false,
        verified: true,
        address: { active: true, strictReplies: false },
      }),
    ).toEqual({
      accept: true,
      strictReplies: false,
    });
  });

  test('rule 5: the first id starts with the prefix, in any case, with or without its <', () => {
    expect(SERVICE_MESSAGE_ID_PREFIX).toBe('svc_mailer_');
    expect(decideAfterData(a, true, '\t <svc_mailer_1@x> ')).toEqual({ accept: true });
    expect(decideAfterData(a, true, '<SVC_MAILER_1@x>')).toEqual({ accept: true });
    expect(decideAfterData(a, true, '<Svc_Mailer_01J.1@x>')).toEqual({ accept: true });
    expect(decideAfterData(a, true, 'svc_mailer_1@x')).toEqual({ accept: true });
    expect(decideAfterData(a, true, '< svc_mailer_1@x>')).toEqual({ accept: true });
    expect(decideAfterData(a, true, '<svc_mailer_1@x> <other@y>')).toEqual({ accept: true });
    expect(decideAfterData(a, true, '<svc_mailer1@x>')).toMatchObject({ accept: false });
    expect(decideAfterData(a, true, '<x@y> <svc_mailer_1@x>')).toMatchObject({ accept: false });
    expect(decideAfterData(a, true, '<<svc_mailer_1@x>')).toMatchObject({ accept: false });
    expect(decideAfterData(a, true, '<xsvc_mailer_1@x>')).toMatchObject({ accept: false });
    expect(decideAfterData(a, true, 'x <svc_mailer_1@x>')).toMatchObject({ accept: false });
  });
});

describe('splitRecipient', () => {
  test('splits at the last @ (a quoted local part may hold one)', () => {
    expect(splitRecipient('"a@b"@Example.com')).toEqual({ username: '"a@b"', domain: 'example.com' });
  });
  test('one character on each side is enough', () => {
    expect(splitRecipient('a@b')).toEqual({ username: 'a', domain: 'b' });
  });
  test('the domain is taken as written: no trailing-dot, Unicode or subdomain folding', () => {
    expect(splitRecipient('x@In.Example.com.')).toEqual({ username: 'x', domain: 'in.example.com.' });
    expect(splitRecipient('x@EXАMPLE.com')).toEqual({ username: 'x', domain: 'exаmple.com' });
    expect(splitRecipient('x@sub.example.com')!.domain).toBe('sub.example.com');
  });
  test('empty or a lone @ is malformed', () => {
    expect(splitRecipient('')).toBeNull();
    expect(splitRecipient('@')).toBeNull();
  });
});

describe('decideRecipientCount (INBOUND_MAX_RECIPIENTS, repeats)', () => {
  const keys = (n: number) => new Set(Array.from({ length: n }, (_, i) => `r${i}@x.test`));

  test('a new recipient below the limit is new; at the limit it is 452 4.5.3', () => {
    expect(decideRecipientCount(keys(0), 'a@x.test', 1)).toEqual({ kind: 'new' });
    expect(decideRecipientCount(keys(99), 'a@x.test', 100)).toEqual({ kind: 'new' });
    expect(decideRecipientCount(keys(100), 'a@x.test', 100)).toEqual({
      kind: 'over',
      code: 452,
      message: '4.5.3 Too many recipients (at most 100 per message)',
    });
    expect(decideRecipientCount(keys(3), 'a@x.test', 2)).toMatchObject({ kind: 'over' });
  });

  test('a recipient already accepted is a repeat, also at or past the limit', () => {
    expect(decideRecipientCount(keys(5), 'r3@x.test', 10)).toEqual({ kind: 'repeat' });
    expect(decideRecipientCount(keys(100), 'r99@x.test', 100)).toEqual({ kind: 'repeat' });
  });
});

describe('decideRecipientMix (strict_replies recipients never share a transaction with others)', () => {
  test('the first recipient sets the kind; the same kind joins', () => {
    expect(decideRecipientMix(a, null, true)).toEqual({ ok: true });
    expect(decideRecipientMix(a, null, false)).toEqual({ ok: true });
    expect(decideRecipientMix(a, true, true)).toEqual({ ok: true });
    expect(decideRecipientMix(a, false, false)).toEqual({ ok: true });
  });
  test('the other kind is 452 4.5.3: sent in another transaction', () => {
    const other = {
      ok: false,
      code: 452,
      message:
        '4.5.3 <user@in.example.com>: send this recipient in a separate transaction (its replies-only rule is decided on the message)',
    };
    expect(decideRecipientMix(a, true, false)).toEqual(other);
    expect(decideRecipientMix(a, false, true)).toEqual(other);
  });
});
