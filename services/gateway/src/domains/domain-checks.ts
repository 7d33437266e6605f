import type { Resolver } from 'node:dns/promises';
import { type Config, type Db, type Kv, type Logger, createDnsResolver } from '@mailyard/platform';
import { domains } from '@mailyard/store';
import { dnsSettings } from './dns-records';
import { checkTiming, nextCheck, retryInconclusive } from './schedule';
import { checkDomainDns } from './verify-domain';

export interface DomainCheckDeps {
  db: Db;
  config: Config;
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
 * Runs runDomainChecks every DOMAIN_CHECK_TICK_MS in the gateway. A kv lock makes one replica
 * run each pass; the others skip it.
 */
export class DomainCheckJob {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly deps: DomainCheckDeps & { kv: Kv },
    private readonly tickMs = deps.config.DOMAIN_CHECK_TICK_MS,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.tick().finally(() => {
        this.running = null;
      });
    }, this.tickMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One guarded pass: false when another replica holds the lock. */
  async tick(now: Date = new Date()): Promise<boolean> {
    const { kv, logger } = this.deps;
    let token: string | null = null;
    try {
      token = await kv.acquireLock(LOCK_KEY, Math.max(this.tickMs * 5, 300_000));
    } catch (err) {
      logger.warn('domain checks: kv unavailable; pass skipped', {
        error: err instanceof Error ? err.message : String(err),
      });
      return false;
    }
    if (!token) return false;
    try {
      const pass = await runDomainChecks(this.deps, now);
      if (pass.checked > 0) logger.info('domain checks pass', { ...pass });
      return true;
    } catch (err) {
      logger.warn('domain checks pass failed', { error: err instanceof Error ? err.message : String(err) });
      return true;
    } finally {
      await kv.releaseLock(LOCK_KEY, token).catch(() => {});
    }
  }
}
