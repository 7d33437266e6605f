import type { SendingMailer } from '@mailyard/contracts';
import { policyRefusal } from './consumer';

const domain = (o: Partial<Extract<SendingMailer, { kind: 'domain' }>> = {}): SendingMailer => ({
  kind: 'domain',
  id: 'dom_1',
  tenantId: 't',
  configType: 'domain',
  state: 'active',
  domain: 'brand.test',
  verified: true,
  selector: 'mailyard',
  dkimPrivateKeyPem: 'pem',
  customArgs: null,
  ...o,
});

const smtp = (o: Partial<Extract<SendingMailer, { kind: 'smtp' }>> = {}): SendingMailer => ({
  kind: 'smtp',
  id: 'smtp_1',
  tenantId: 't',
  configType: 'basic_smtp',
  state: 'active',
  email: 'a@example.com',
  smtp: { host: 'smtp.example.com', port: 587, secure: 'Tls', username: 'u', password: 'p' },
  ...o,
});

describe('policyRefusal', () => {
  it('lets active sending mailers send', () => {
    expect(policyRefusal(domain())).toBeNull();
    for (const configType of ['basic_smtp', 'smtp', 'oauth_smtp'] as const)
      expect(policyRefusal(smtp({ configType }))).toBeNull();
  });

  it('refuses a missing, deleted, disabled or deactivated mailer', () => {
    expect(policyRefusal(null)).toBe('Mailer not found');
    expect(policyRefusal(smtp({ state: 'deleted' }))).toBe('Mailer was deleted');
    expect(policyRefusal(smtp({ state: 'disabled' }))).toBe('Mailer is disabled');
    expect(policyRefusal(domain({ state: 'deactivated' }))).toBe('Mailer is deactivated');
  });

  it('refuses receive-only mailers', () => {
    for (const configType of ['imap', 'basic_imap', 'oauth_imap'] as const)
      expect(policyRefusal(smtp({ configType }))).toBe(`Mailer cannot send mail (config type ${configType})`);
  });

  it('refuses an unverified sending domain', () => {
    expect(policyRefusal(domain({ verified: false }))).toBe('Sending domain is not verified');
  });
});
