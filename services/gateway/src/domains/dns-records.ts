import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import type { DomainDnsRecord } from '@mailyard/contracts';
import type { GatewayConfig } from '../settings';

const generateKeyPairAsync = promisify(generateKeyPair);

/** What the suggested records point at (operator configuration). */
export interface DnsSettings {
  /** `include:` host of the SPF record; null when SPF_INCLUDE=none. */
  spfInclude: string | null;
  /** Outbound IPs/ranges of this installation (SENDING_IPS), added to every SPF record. */
  sendingIps: string[];
  /** Host the MX record points at (INBOUND_MX_HOST, default SERVICE_DOMAIN). */
  mxHost: string;
  /** Where DMARC aggregate reports go (`dmarc@<SERVICE_DOMAIN>`, read by the MX): the `rua` of the suggested DMARC record. */
  dmarcRua: string;
}

export function dnsSettings(
  config: Pick<GatewayConfig, 'SPF_INCLUDE' | 'SENDING_IPS' | 'INBOUND_MX_HOST' | 'SERVICE_DOMAIN'>,
): DnsSettings {
  const serviceDomain = config.SERVICE_DOMAIN.toLowerCase().replace(/\.$/, '');
  return {
    spfInclude: config.SPF_INCLUDE === 'none' ? null : (config.SPF_INCLUDE ?? `_spf.${serviceDomain}`),
    sendingIps: config.SENDING_IPS,
    mxHost: config.INBOUND_MX_HOST ?? serviceDomain,
    dmarcRua: `dmarc@${serviceDomain}`,
  };
}

/** A fresh RSA-2048 DKIM key: the `p=` value (base64 SubjectPublicKeyInfo) and the PKCS#8 PEM private key. */
export async function generateDkimKeyPair(): Promise<{ publicKey: string; privateKeyPem: string }> {
  const { publicKey, privateKey } = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKey: publicKey.toString('base64'), privateKeyPem: privateKey };
}

export const dkimRecordName = (domain: string, selector: string) => `${selector}._domainkey.${domain}`;
export const dmarcRecordName = (domain: string) => `_dmarc.${domain}`;

/**
 * The suggested DMARC record: monitoring only (`p=none`), aggregate reports to our MX, which
 * stores them for GET /v1/domain/{domain}/dmarc. A domain that already publishes a DMARC record
 * keeps it and adds our address to its `rua=` (record-checks.ts checkDmarc says so).
 */
export const dmarcRecordValue = (settings: DnsSettings) =>
  `v=DMARC1; p=none; rua=mailto:${settings.dmarcRua}`;

/** IPs that must appear in the SPF record: the domain's own `ips` and the installation's SENDING_IPS. */
export function spfIps(domainIps: string[], settings: DnsSettings): string[] {
  return [...new Set([...domainIps, ...settings.sendingIps])];
}

export function spfRecordValue(domainIps: string[], settings: DnsSettings): string {
  const mechanisms = spfIps(domainIps, settings).map((ip) => (ip.includes(':') ? `ip6:${ip}` : `ip4:${ip}`));
  if (settings.spfInclude) mechanisms.push(`include:${settings.spfInclude}`);
  return ['v=spf1', ...mechanisms, '~all'].join(' ');
}

export const NOT_CHECKED = 'Not checked yet: publish the record, then call PUT /v1/domain/verify/{domain}';

/** The records a new domain publishes, all unverified until the first check. */
export function expectedRecords(
  domain: { name: string; selector: string; dkimPublicKey: string; ips: string[] },
  settings: DnsSettings,
): DomainDnsRecord[] {
  const pending = { verified: false, reason: NOT_CHECKED };
  return [
    {
      purpose: 'dkim',
      type: 'TXT',
      name: dkimRecordName(domain.name, domain.selector),
      value: `v=DKIM1; k=rsa; p=${domain.dkimPublicKey}`,
      required: true,
      ...pending,
    },
    {
      purpose: 'spf',
      type: 'TXT',
      name: domain.name,
      value: spfRecordValue(domain.ips, settings),
      required: true,
      ...pending,
    },
    {
      purpose: 'dmarc',
      type: 'TXT',
      name: dmarcRecordName(domain.name),
      value: dmarcRecordValue(settings),
      required: false,
      ...pending,
    },
    {
      purpose: 'mx',
      type: 'MX',
      name: domain.name,
      value: settings.mxHost,
      priority: 10,
      required: false,
      ...pending,
    },
  ];
}
