import { ErrorText } from '../errors';
import { IdPrefix } from '../ids';
import {
  IMAP_CAPABLE_CONFIG_TYPES,
  MAILER_CAPABILITIES,
  type MailerSendStatus,
  SMTP_ONLY_CONFIG_TYPES,
  isImapCapable,
  mailerCapabilities,
  sendProviderOf,
  sendRefusal,
} from './capabilities';
import { CONFIG_TYPES, type ConfigType, MAILER_STATES } from './types';

/** docs/mailers.md "The table": what each config_type is, row by row (sends, receives, path, provider, credential, verified by). */
const EXPECTED: Record<ConfigType, [boolean, boolean, string | null, string, string, string]> = {
  domain: [true, false, null, 'mx', 'dkim', 'dns'],
  smtp: [true, false, 'smtp', 'smtp', 'password', 'none'],
  basic_smtp: [true, false, 'smtp', 'smtp', 'password', 'login'],
  oauth_smtp: [true, false, 'smtp', 'oauth', 'oauth', 'oauth'],
  imap: [false, true, 'imap', 'imap', 'password', 'none'],
  basic_imap: [false, true, 'imap', 'imap', 'password', 'login'],
  oauth_imap: [false, true, 'imap', 'oauth', 'oauth', 'oauth'],
  smtp_imap: [true, true, 'imap', 'oauth', 'oauth', 'oauth'],
  sparkpost: [true, false, 'sparkpost', 'sparkpost', 'api_key', 'none'],
};

describe('the mailer capability table', () => {
  it('has one row for every config_type of the spec', () => {
    expect(Object.keys(MAILER_CAPABILITIES).sort()).toEqual([...CONFIG_TYPES].sort());
    for (const t of CONFIG_TYPES) expect(mailerCapabilities(t).configType).toBe(t);
  });

  it.each(CONFIG_TYPES)('%s: sends, receives, protocol, provider, credential, verified-by', (t) => {
    const c = mailerCapabilities(t);
    expect([c.sends, c.receives, c.protocol, c.provider, c.credential, c.verifiedBy]).toEqual(EXPECTED[t]);
    // Only password types have a password to log in with, over their own protocol's login.
    expect(c.passwordProtocol).toBe(c.credential === 'password' ? c.protocol : null);
    expect(c.updatable).toBe(t !== 'domain');
  });

  it('covers every id prefix of the spec', () => {
    const prefixes = new Set(Object.values(MAILER_CAPABILITIES).flatMap((c) => c.idPrefixes));
    for (const p of [
      IdPrefix.domain,
      IdPrefix.smtp,
      IdPrefix.basicSmtp,
      IdPrefix.oauthSmtp,
      IdPrefix.basicImap,
      IdPrefix.oauthImap,
      IdPrefix.oauthSmtpImap,
      IdPrefix.sparkpost,
    ])
      expect(prefixes).toContain(p);
  });

  it('derives the MAILER_DEACTIVATED routing sets of docs/webhooks.md', () => {
    expect([...IMAP_CAPABLE_CONFIG_TYPES].sort()).toEqual(['basic_imap', 'imap', 'oauth_imap', 'smtp_imap']);
    expect([...SMTP_ONLY_CONFIG_TYPES].sort()).toEqual(['basic_smtp', 'oauth_smtp', 'smtp']);
    expect(isImapCapable('smtp_imap')).toBe(true);
    expect(isImapCapable('basic_smtp')).toBe(false);
    expect(isImapCapable('unknown')).toBe(false);
  });

  it('names the send transport by provider; OAuth senders need their account’s provider', () => {
    expect(sendProviderOf({ configType: 'domain' })).toBe('mx');
    expect(sendProviderOf({ configType: 'smtp' })).toBe('smtp');
    expect(sendProviderOf({ configType: 'basic_smtp' })).toBe('smtp');
    expect(sendProviderOf({ configType: 'sparkpost' })).toBe('sparkpost');
    expect(sendProviderOf({ configType: 'oauth_smtp' })).toBeNull();
    expect(sendProviderOf({ configType: 'oauth_smtp', oauthProvider: 'gmail' })).toBe('gmail');
    expect(sendProviderOf({ configType: 'smtp_imap', oauthProvider: 'graph' })).toBe('graph');
    for (const t of ['imap', 'basic_imap', 'oauth_imap'] as const)
      expect(sendProviderOf({ configType: t, oauthProvider: 'gmail' })).toBeNull();
  });
});

describe('sendRefusal (the one send policy)', () => {
  it('refuses an unknown or deleted mailer as not found (404)', () => {
    const notFound = { code: 'not_found', status: 404, message: ErrorText.mailerNotFound };
    expect(sendRefusal(null)).toEqual(notFound);
    for (const t of CONFIG_TYPES) expect(sendRefusal({ configType: t, state: 'deleted' })).toEqual(notFound);
  });

  // Every type in every state, a domain both verified and not.
  const cases = CONFIG_TYPES.flatMap((t) =>
    MAILER_STATES.flatMap((state) =>
      (t === 'domain' ? [true, false] : [undefined]).map((verified) => [t, state, verified] as const),
    ),
  );
  it.each(cases)('%s, %s, verified=%s', (configType, state, verified) => {
    const mailer: MailerSendStatus = { configType, state, ...(verified === undefined ? {} : { verified }) };
    const receiveOnly = ['imap', 'basic_imap', 'oauth_imap'].includes(configType);
    const expected = receiveOnly
      ? { code: 'cannot_send', status: 422, message: ErrorText.mailerCannotSend }
      : state === 'disabled'
        ? { code: 'disabled', status: 422, message: ErrorText.mailerDisabled }
        : state === 'deactivated'
          ? { code: 'deactivated', status: 422, message: ErrorText.mailerDeactivated }
          : configType === 'domain' && !verified
            ? { code: 'unverified', status: 422, message: ErrorText.domainNotVerified }
            : null;
    expect(sendRefusal(mailer)).toEqual(expected);
  });

  it('treats a domain mailer without a verified flag as unverified', () => {
    expect(sendRefusal({ configType: 'domain', state: 'active' })?.code).toBe('unverified');
  });
});
