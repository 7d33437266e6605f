import { answerForRefusal } from './smtp-answers';

test('API refusals map to SMTP answers', () => {
  expect(answerForRefusal(404, 'Mailer not found')).toEqual({ code: 550, message: '5.7.1 Mailer not found' });
  expect(answerForRefusal(422, 'disabled')).toMatchObject({ code: 550 });
  expect(answerForRefusal(413, 'too large')).toMatchObject({ code: 552 });
  expect(answerForRefusal(400, 'bad\r\nline')).toEqual({ code: 550, message: '5.6.0 bad line' });
  expect(answerForRefusal(409, 'x')).toMatchObject({ code: 451 });
});
