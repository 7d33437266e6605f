import type { Resolver } from 'node:dns/promises';
import type { DomainDnsRecord } from '@mailyard/contracts';
import { lookupMx, lookupTxt } from '@mailyard/platform';
import type { StoredDomain } from '@mailyard/store';
import { type DnsSettings, dkimRecordName, dmarcRecordName, expectedRecords, spfIps } from './dns-records';
import { type RecordOutcome, checkDkim, checkDmarc, checkMx, checkSpf } from './record-checks';

export interface DomainCheck {
  /** DKIM and SPF both verified. */
  verified: boolean;
  records: DomainDnsRecord[];
  /** A required record could not be checked (DNS timeout or server failure): no definite answer. */
  inconclusive: boolean;
}

/** Looks the domain's records up (in parallel) and checks each against what we expect. */
export async function checkDomainDns(
  resolver: Resolver,
  domain: StoredDomain,
  settings: DnsSettings,
): Promise<DomainCheck> {
  const [dkim, spf, dmarc, mx] = await Promise.all([
    lookupTxt(resolver, dkimRecordName(domain.name, domain.selector)),
    lookupTxt(resolver, domain.name),
    lookupTxt(resolver, dmarcRecordName(domain.name)),
    lookupMx(resolver, domain.name),
  ]);
  const outcomes: Record<DomainDnsRecord['purpose'], RecordOutcome> = {
    dkim: checkDkim(dkimRecordName(domain.name, domain.selector), domain.dkimPublicKey, dkim),
    spf: checkSpf(domain.name, spfIps(domain.ips, settings), settings, spf),
    dmarc: checkDmarc(dmarcRecordName(domain.name), settings.dmarcRua, dmarc),
    mx: checkMx(domain.name, settings.mxHost, mx),
  };
  const records = expectedRecords(domain, settings).map((record) => {
    const { verified, reason } = outcomes[record.purpose];
    const { reason: _pending, ...rest } = record;
    return { ...rest, verified, ...(verified ? {} : { reason }) };
  });
  const required = records.filter((r) => r.required);
  return {
    verified: required.every((r) => r.verified),
    records,
    inconclusive: required.some((r) => outcomes[r.purpose].inconclusive === true),
  };
}
