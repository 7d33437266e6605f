import { decideAfterData, decideRecipient, decideServiceRecipient, splitRecipient } from './acceptance';

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
    expect(decideRecipient(a, { wildcard: true, address: null })).toEqual({
      accept: true,
      strictReplies: false,
    });
    expect(decideRecipient(a, { wildcard: true, address: { active: false, strictReplies: true } })).toEqual({
      accept: true,
      strictReplies: false,
    });
  });
  test('rule 2: username not configured', () => {
    expect(decideRecipient(a, { wildcard: false, address: null })).toMatchObject({
      accept: false,
      message: expect.stringMatching(/^5\.1\.1 .*no such mailbox/),
    });
  });
  test('rule 3: inactive username', () => {
    expect(
      decideRecipient(a, { wildcard: false, address: { active: false, strictReplies: false } }),
    ).toMatchObject({
      accept: false,
      message: expect.stringMatching(/^5\.2\.1 /),
    });
  });
  test('active username accepts, carrying strict_replies', () => {
    expect(decideRecipient(a, { wildcard: false, address: { active: true, strictReplies: true } })).toEqual({
      accept: true,
      strictReplies: true,
    });
  });
});

describe('decideAfterData (rules 4-6)', () => {
  test('rule 4: strict and In-Reply-To missing or foreign', () => {
    expect(decideAfterData(a, true, '')).toMatchObject({ accept: false, code: 550 });
    expect(decideAfterData(a, true, '<other@x>')).toMatchObject({ accept: false, code: 550 });
    expect(decideAfterData(a, true, 'svc_mailer_1@x')).toMatchObject({ accept: false });
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
    for (const kind of ['bounce', 'feedback', 'unsubscribe'] as const)
      expect(decideServiceRecipient('x@b.test', kind)).toEqual({ accept: true, strictReplies: false });
  });
  test('anything else on the bounce domain is 550', () => {
    expect(decideServiceRecipient('bounce+forged@b.test', null)).toMatchObject({
      accept: false,
      code: 550,
      message: '5.1.1 <bounce+forged@b.test>: no such mailbox',
    });
  });
});
