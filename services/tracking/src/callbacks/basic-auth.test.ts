import { basicCredentials } from './basic-auth';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

describe('basicCredentials', () => {
  it('reads user and password, the password keeping its colons', () => {
    expect(basicCredentials(`Basic ${b64('sp_user:pa:ss')}`)).toEqual({
      username: 'sp_user',
      password: 'pa:ss',
    });
    expect(basicCredentials(`basic   ${b64('u:')}`)).toEqual({ username: 'u', password: '' });
  });

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['another scheme', `Bearer ${b64('u:p')}`],
    ['no colon', `Basic ${b64('user')}`],
    ['not base64', 'Basic !!!'],
    ['a huge header', `Basic ${'A'.repeat(5000)}`],
  ])('refuses %s', (_what, header) => {
    expect(basicCredentials(header)).toBeNull();
  });
});
