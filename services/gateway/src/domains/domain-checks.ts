import type { Resolver } from 'node:dns/promises';
import { type Db, type Kv, type Logger, ScheduledJob, createDnsResolver } from '@mailyard/platform';
import { domains } from '@mailyard/store';
import type { GatewayConfig } from '../settings';
import { dnsSettings } from './dns-records';
import { checkTiming, nextCheck, retryInconclusive } from './schedule';
import { checkDomainDns } from './verify-domain';

export interface DomainCheckDeps {
  db: Db;
  config: GatewayConfig;
  logger: Logger;
  /** Defaults to a resolver over DNS_SERVERS. */
  resolver?: Resolver;
  /** Called when a pass wrote events to the outbox (lets the relay publish at once). */
  onOutboxWrite?: () => void;
}

export interface DomainCheckPass {
  checked: number;
  /** Domains whose `verified` flipped (each emitted DOMAIN_VERIFICATION). */
  changed: number;
  /** Verified domains whose check got no DNS answer: kept as they were, retried soon. */
  inconclusive: number;
  failed: number;
}

const CONCURRENCY = 5;

/**
 * One pass of the background re-check: every domain whose next check is due at `now` (up to
 * DOMAIN_CHECK_BATCH) is looked up in DNS. A result that flips `verified` emits
 * DOMAIN_VERIFICATION (a verified domain whose records vanished becomes unverified); an
 * unchanged result emits nothing. Exported so tests drive a pass directly.
 */
export async function runDomainChecks(
  deps: DomainCheckDeps,
  now: Date = new Date(),
): Promise<DomainCheckPass> {
  const { db, config, logger } = deps;
  const resolver = deps.resolver ?? createDnsResolver(config);
  const settings = dnsSettings(config);
  const timing = checkTiming(config);
  const due = await domains.due(db, now, config.DOMAIN_CHECK_BATCH);
  const pass: DomainCheckPass = { checked: 0, changed: 0, inconclusive: 0, failed: 0 };
  let next = 0;
  const worker = async () => {
    while (next < due.length) {
      const item = due[next++]!;
      try {
        const domain = await domains.get(db, item.tenantId, item.name);
        if (!domain) continue;
        const result = await checkDomainDns(resolver, domain, settings);
        pass.checked++;
        if (domain.verified && !result.verified && result.inconclusive) {
          pass.inconclusive++;
          await domains.reschedule(db, domain.tenantId, domain.id, now, retryInconclusive(now, timing));
          continue;
        }
        const saved = await domains.saveCheck(
          db,
          domain.tenantId,
          domain.id,
          { verified: result.verified, records: result.records, checkedAt: now },
          (before) => nextCheck(before, result.verified, now, timing, false),
          'on-change',
        );
        if (saved?.changed) {
          pass.changed++;
          logger.info('domain verification changed', {
            domain: domain.name,
            mailer_id: domain.id,
            verified: result.verified,
          });
        }
      } catch (err) {
        pass.failed++;
        logger.warn('domain check failed', {
          domain: item.name,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, due.length) }, worker));
  if (pass.changed > 0) deps.onOutboxWrite?.();
  return pass;
}

const LOCK_KEY = 'domain-checks:leader';

/**
 * The background re-check as a scheduled job (libs/platform ScheduledJob): every
 * DOMAIN_CHECK_TICK_MS (plus jitter) one replica, the holder of the kv lock, runs a pass; the
 * others skip it. Any gateway replica may run it.
 */
export function domainCheckJob(deps: DomainCheckDeps & { kv: Kv }, tickMs: number): ScheduledJob {
  return new ScheduledJob({
    name: 'domain checks',
    lockKey: LOCK_KEY,
    intervalMs: tickMs,
    kv: deps.kv,
    logger: deps.logger,
    run: async () => {
      const pass = await runDomainChecks(deps);
      if (pass.checked > 0) deps.logger.info('domain checks pass', { ...pass });
    },
  });
}
