import { pausedMessage } from '@mailyard/contracts';
import { answerForRefusal } from './smtp-answers';

test('API refusals map to SMTP answers', () => {
  expect(answerForRefusal(404, 'Mailer not found')).toEqual({ code: 550, message: '5.7.1 Mailer not found' });
  expect(answerForRefusal(422, 'disabled')).toMatchObject({ code: 550 });
  expect(answerForRefusal(413, 'too large')).toMatchObject({ code: 552 });
  expect(answerForRefusal(400, 'bad\r\nline')).toEqual({ code: 550, message: '5.6.0 bad line' });
  expect(answerForRefusal(409, 'x')).toMatchObject({ code: 451 });
});

test('a paused sender (422) is a permanent 550 5.7.1 with the API text: it lasts until resumed', () => {
  const text = pausedMessage({
    scope: 'domain',
    key: 'example.com',
    metric: 'invalid_recipient_bounce_rate',
    rate: 0.062,
    window: 1000,
  });
  expect(answerForRefusal(422, text)).toEqual({
    code: 550,
    message:
      '5.7.1 Sending is paused for example.com: 6.2% invalid-recipient bounces over the last 1000 emails',
  });
});
