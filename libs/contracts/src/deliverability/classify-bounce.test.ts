import { BOUNCE_CATEGORIES } from './bounce-category';
import { BOUNCE_CORPUS } from './bounce-corpus';
import { MAX_BOUNCE_TEXT, classifyBounce } from './classify-bounce';

describe('the corpus of provider and MTA bounce texts', () => {
  test('holds at least 60 texts and covers every category', () => {
    expect(BOUNCE_CORPUS.length).toBeGreaterThanOrEqual(60);
    expect(new Set(BOUNCE_CORPUS.map((e) => e.category))).toEqual(new Set(BOUNCE_CATEGORIES));
  });

  test.each(BOUNCE_CORPUS.map((e, i) => [i, e.provider, e.category, e] as const))(
    '#%i %s -> %s',
    (_i, _p, _c, e) => {
      expect(classifyBounce({ status: e.status, text: e.text, action: e.action })).toEqual({
        category: e.category,
        permanent: e.permanent,
      });
    },
  );
});

describe('the examples of the issue', () => {
  test.each([
    ['5.7.1', '550 5.7.1 Service unavailable; client [192.0.2.1] blocked using Spamhaus', 'reputation'],
    ['5.7.1', '554 5.7.1 rejected: listed at Barracuda', 'reputation'],
    ['5.7.1', '550 5.7.1 blocked using bl.example.test', 'reputation'],
    ['5.2.2', '552 5.2.2 Sorry', 'mailbox_full'],
    ['', '552 the recipient is over quota', 'mailbox_full'],
    ['5.1.1', '550 5.1.1 the user does not exist', 'invalid_recipient'],
  ])('%s %s -> %s', (status, text, category) => {
    expect(classifyBounce({ status, text }).category).toBe(category);
  });
});

describe('codes and text', () => {
  test('the enhanced status is read from the text when not given; the status field wins', () => {
    expect(classifyBounce({ text: '550 5.1.1 gone' })).toEqual({
      category: 'invalid_recipient',
      permanent: true,
    });
    expect(classifyBounce({ status: '4.2.2', text: '550 5.1.1 gone' })).toEqual({
      category: 'mailbox_full',
      permanent: false,
    });
  });

  test('only the leading code of a reply is its status: not a number inside the text or an IP address', () => {
    expect(classifyBounce({ text: 'mail from [45.2.1.3] refused' }).category).toBe('unknown');
    expect(classifyBounce({ text: '550 see 5.1.1 somewhere' }).category).toBe('unknown');
    expect(classifyBounce({ status: '45.2.1.3', text: '' }).category).toBe('unknown');
    expect(classifyBounce({ text: '550-5.1.1 gone' }).category).toBe('invalid_recipient');
    expect(classifyBounce({ text: '5.2.2 full' }).category).toBe('mailbox_full');
  });

  test('a reply code given apart from the text decides permanence', () => {
    expect(classifyBounce({ replyCode: 550, text: 'No such user' })).toEqual({
      category: 'invalid_recipient',
      permanent: true,
    });
    expect(classifyBounce({ replyCode: 450, text: 'No such user' }).permanent).toBe(false);
  });

  test('a delayed action is never permanent', () => {
    expect(classifyBounce({ status: '5.1.1', text: '', action: 'delayed' })).toEqual({
      category: 'invalid_recipient',
      permanent: false,
    });
  });

  test('a x.7.y status is never invalid_recipient from its words', () => {
    expect(classifyBounce({ status: '5.7.1', text: '550 5.7.1 user unknown' }).category).toBe('policy');
  });

  test('deferral words on a permanent refusal are not a rate limit', () => {
    expect(classifyBounce({ text: '550 5.7.1 too many messages, try again later' }).category).toBe('policy');
    expect(classifyBounce({ text: '421 4.7.0 too many messages, try again later' }).category).toBe(
      'rate_limited',
    );
  });

  test('text beyond the cap is not read', () => {
    const text = `550 ${'x'.repeat(MAX_BOUNCE_TEXT)} user unknown`;
    expect(classifyBounce({ text }).category).toBe('unknown');
  });
});
