import { generateKeyPairSync } from 'node:crypto';
import { type Socket, createSocket } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import type { AddressInfo } from 'node:net';
import {
  type DomainData,
  type DomainDnsRecord,
  type DomainVerificationEvent,
  DomainVerificationEventSchema,
  RoutingKey,
} from '@mailyard/contracts';
import type { OutboxRelay } from '@mailyard/platform';
import { type DnsRecords, type Dnsmasq, startDnsmasq } from '@mailyard/testkit/peers/dnsmasq';
import request from 'supertest';
import { domainCheckJob, runDomainChecks } from '../src/domains/domain-checks';
import { type CapturedEvents, captureEvents, outboxRows, startRelay } from './support/bus-events';
import { type SharedStores, type TestGateway, bearer, createStores, startGateway } from './support/harness';

const DAY = 86_400_000;

/** Verification against a real dnsmasq; events through the outbox relay onto the real RabbitMQ vhost. */
describe('domain verification against DNS (servers)', () => {
  let stores: SharedStores;
  let dns: Dnsmasq;
  let gw: TestGateway;
  let relay: OutboxRelay;
  let events: CapturedEvents<DomainVerificationEvent>;
  let key: string;
  let tenantId: string;
  /** Records currently served, per domain; dnsmasq is rewritten from all of them. */
  const zone = new Map<string, DnsRecords>();

  // Generous DNS timeouts against dnsmasq, so a loaded machine never turns an answer into a
  // timeout; only the never-answering servers below use short ones (they time out either way).
  const env = { SERVICE_DOMAIN: 'mailyard.test', DNS_TIMEOUT_MS: '5000', DNS_TRIES: '2' };
  const silentEnv = { ...env, DNS_TIMEOUT_MS: '400', DNS_TRIES: '1' };

  beforeAll(async () => {
    stores = await createStores('servers');
    dns = await startDnsmasq({});
    gw = await startGateway(stores, { ...env, DNS_SERVERS: dns.server });
    relay = startRelay(gw.ctx);
    events = await captureEvents<DomainVerificationEvent>(gw.ctx, RoutingKey.domainVerification);
    ({ apiKey: key, tenantId } = await gw.newTenant());
  });
  afterAll(async () => {
    await events?.stop();
    await relay?.stop();
    await gw?.close();
    await dns?.stop();
    await stores?.drop();
  });

  const add = async (body: object): Promise<DomainData> => {
    const res = await request(gw.app).post('/v1/domain/add').set(bearer(key)).send(body);
    expect(res.status).toBe(201);
    return res.body.data;
  };
  const verify = (domain: string, app = gw.app) =>
    request(app)
      .put(`/v1/domain/verify/${encodeURIComponent(domain)}`)
      .set(bearer(key));

  /** The records of an add response as dnsmasq records, optionally changed per purpose. */
  function zoneFor(
    data: DomainData,
    change: Partial<Record<DomainDnsRecord['purpose'], string | null>> = {},
  ): DnsRecords {
    const out: Required<DnsRecords> = { txt: [], mx: [], a: [] };
    for (const r of data.records) {
      const value = r.purpose in change ? change[r.purpose] : r.value;
      if (value === null || value === undefined) continue;
      if (r.type === 'MX') out.mx.push({ name: r.name, host: value, preference: r.priority });
      else out.txt.push({ name: r.name, value });
    }
    return out;
  }
  async function publish(domain: string, records: DnsRecords | null): Promise<void> {
    if (records) zone.set(domain, records);
    else zone.delete(domain);
    const all: Required<DnsRecords> = { txt: [], mx: [], a: [] };
    for (const r of zone.values()) {
      all.txt.push(...(r.txt ?? []));
      all.mx.push(...(r.mx ?? []));
      all.a.push(...(r.a ?? []));
    }
    await dns.setRecords(all);
  }
  const eventsFor = (domain: string) => events.received.filter((e) => e.payload.details.domain === domain);
  /** DOMAIN_VERIFICATION rows the outbox holds for a domain: written in the check's own transaction. */
  const outboxEventsFor = async (domain: string) =>
    (await outboxRows(gw.ctx, RoutingKey.domainVerification)).filter(
      (r) => (r.message.payload as DomainVerificationEvent).details.domain === domain,
    );
  /**
   * Proves that no event is still on its way, by a positive signal instead of a sleep: a marker
   * event enqueued now (a manual verify always emits) is relayed after every row before it, and
   * has arrived.
   */
  let markers = 0;
  async function flushEvents(): Promise<void> {
    const marker = `marker-${++markers}.example.com`;
    await add({ domain: marker });
    await verify(marker);
    await relay.drainOnce();
    await events.waitFor((e) => e.payload.details.domain === marker, 60_000);
  }
  const record = (data: DomainData, purpose: string) => data.records.find((r) => r.purpose === purpose)!;

  it('verifies with the records of the add response and publishes DOMAIN_VERIFICATION', async () => {
    const data = await add({ domain: 'good.example.com', custom_args: { plan: 'pro' } });
    expect(record(data, 'dkim').value.length).toBeGreaterThan(255); // served as several TXT strings
    await publish('good.example.com', zoneFor(data));

    const res = await verify('good.example.com');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, message: 'Domain verified' });
    expect(res.body.data).toMatchObject({
      domain: 'good.example.com',
      mailer_id: data.mailer_id,
      verified: true,
    });
    for (const r of res.body.data.records) {
      expect(r.verified).toBe(true);
      expect(r).not.toHaveProperty('reason');
    }
    expect(res.body.data.verified_at).toEqual(expect.any(String));
    expect(res.body.data.last_checked_at).toEqual(expect.any(String));

    const event = await events.waitFor((e) => e.payload.details.domain === 'good.example.com');
    expect(event).toMatchObject({ type: 'domain.verification', version: 1, tenant_id: tenantId });
    expect(event.payload).toEqual({
      event: 'DOMAIN_VERIFICATION',
      details: {
        domain: 'good.example.com',
        verified: true,
        mailer_id: data.mailer_id,
        custom_args: { plan: 'pro' },
        webhook_id: '',
      },
    });
    expect(DomainVerificationEventSchema.safeParse(event.payload).success).toBe(true);

    const details = await request(gw.app).get('/v1/domain/good.example.com').set(bearer(key));
    expect(details.body.data.verified).toBe(true);
    const mailer = await request(gw.app).get(`/v1/mailer/${data.mailer_id}`).set(bearer(key));
    expect(mailer.body.data.config).toMatchObject({ domain: 'good.example.com', verified: true });
  });

  it('a wrong DKIM key: verified false, with the reason on the DKIM record', async () => {
    const data = await add({ domain: 'wrongkey.example.com' });
    const other = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
      type: 'spki',
      format: 'der',
    });
    await publish(
      'wrongkey.example.com',
      zoneFor(data, { dkim: `v=DKIM1; k=rsa; p=${other.toString('base64')}` }),
    );
    const res = await verify('wrongkey.example.com');
    expect(res.status).toBe(200);
    expect(res.body.data.verified).toBe(false);
    expect(res.body.message).toBe('Domain not verified: DKIM record check failed');
    expect(record(res.body.data, 'dkim')).toMatchObject({
      verified: false,
      reason:
        'DKIM public key at mailyard._domainkey.wrongkey.example.com does not match the key issued for this domain',
    });
    expect(record(res.body.data, 'spf').verified).toBe(true);
    const event = await events.waitFor((e) => e.payload.details.domain === 'wrongkey.example.com');
    expect(event.payload.details).toMatchObject({
      verified: false,
      mailer_id: data.mailer_id,
      custom_args: {},
    });
  });

  it('a missing SPF record: verified false, with the reason on the SPF record', async () => {
    const data = await add({ domain: 'nospf.example.com' });
    await publish('nospf.example.com', zoneFor(data, { spf: null }));
    const res = await verify('nospf.example.com');
    expect(res.body.data.verified).toBe(false);
    expect(record(res.body.data, 'dkim').verified).toBe(true);
    expect(record(res.body.data, 'spf')).toMatchObject({
      verified: false,
      reason: 'No SPF record (TXT starting with v=spf1) at nospf.example.com',
    });
  });

  it('an SPF record that does not authorize us, or two SPF records', async () => {
    const data = await add({ domain: 'otherspf.example.com' });
    await publish(
      'otherspf.example.com',
      zoneFor(data, { spf: 'v=spf1 include:_spf.elsewhere.example -all' }),
    );
    const res = await verify('otherspf.example.com');
    expect(record(res.body.data, 'spf')).toMatchObject({
      verified: false,
      reason:
        'SPF record at otherspf.example.com does not authorize this service; add include:_spf.mailyard.test',
    });
    const zoneTwo = zoneFor(data);
    zoneTwo.txt!.push({ name: 'otherspf.example.com', value: 'v=spf1 -all' });
    await publish('otherspf.example.com', zoneTwo);
    const two = await verify('otherspf.example.com');
    expect(record(two.body.data, 'spf').reason).toMatch(
      /^2 SPF records at otherspf\.example\.com; publish exactly one/,
    );
  });

  it('DMARC and MX are suggestions: verified without them, each with its reason', async () => {
    const data = await add({ domain: 'minimal.example.com' });
    await publish('minimal.example.com', zoneFor(data, { dmarc: null, mx: 'mx.elsewhere.example' }));
    const res = await verify('minimal.example.com');
    expect(res.body.data.verified).toBe(true);
    expect(record(res.body.data, 'dmarc')).toMatchObject({
      verified: false,
      reason:
        'No TXT record at _dmarc.minimal.example.com: the name does not exist (NXDOMAIN) (recommended, not required for verification)',
    });
    expect(record(res.body.data, 'mx')).toMatchObject({
      verified: false,
      reason:
        'MX records of minimal.example.com point at mx.elsewhere.example, not mailyard.test (needed only to receive inbound email)',
    });
  });

  it("the owner's own DMARC record without our rua: still verified, told to add our address", async () => {
    const data = await add({ domain: 'owndmarc.example.com' });
    expect(record(data, 'dmarc')).toMatchObject({
      name: '_dmarc.owndmarc.example.com',
      value: 'v=DMARC1; p=none; rua=mailto:dmarc@mailyard.test',
      required: false,
    });
    await publish(
      'owndmarc.example.com',
      zoneFor(data, { dmarc: 'v=DMARC1; p=reject; rua=mailto:agg@owndmarc.example.com' }),
    );
    const res = await verify('owndmarc.example.com');
    expect(res.body).toMatchObject({ message: 'Domain verified', data: { verified: true } });
    expect(record(res.body.data, 'dmarc')).toMatchObject({
      verified: false,
      reason:
        'DMARC record at _dmarc.owndmarc.example.com does not send aggregate reports to this service: keep the record and add mailto:dmarc@mailyard.test to its rua= tag (comma separated after any address it has) (recommended, not required for verification)',
    });
    await publish(
      'owndmarc.example.com',
      zoneFor(data, {
        dmarc: 'v=DMARC1; p=reject; rua=mailto:agg@owndmarc.example.com,mailto:dmarc@mailyard.test',
      }),
    );
    const merged = await verify('owndmarc.example.com');
    expect(record(merged.body.data, 'dmarc')).toEqual(expect.objectContaining({ verified: true }));
    expect(record(merged.body.data, 'dmarc')).not.toHaveProperty('reason');
  });

  it('NXDOMAIN: every record unverified with its reason', async () => {
    await add({ domain: 'nowhere.example.com' });
    const res = await verify('nowhere.example.com');
    expect(res.body.data.verified).toBe(false);
    expect(res.body.message).toBe('Domain not verified: DKIM and SPF record check failed');
    for (const r of res.body.data.records) {
      expect(r.verified).toBe(false);
      expect(r.reason).toMatch(/the name does not exist \(NXDOMAIN\)/);
    }
    expect(record(res.body.data, 'dkim').reason).toBe(
      'No TXT record at mailyard._domainkey.nowhere.example.com: the name does not exist (NXDOMAIN)',
    );
  });

  it('resolver timeout: verified false with a timeout reason, answered within the bounded time', async () => {
    const data = await add({ domain: 'slowdns.example.com' });
    await publish('slowdns.example.com', zoneFor(data));
    const silent: Socket = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    silent.on('message', () => {}); // bound, never answers
    const port = (silent.address() as AddressInfo).port;
    const slow = await startGateway(stores, { ...silentEnv, DNS_SERVERS: `127.0.0.1:${port}` });
    try {
      const res = await verify('slowdns.example.com', slow.app);
      expect(res.status).toBe(200);
      expect(res.body.data.verified).toBe(false);
      for (const r of res.body.data.records)
        expect(r.reason).toMatch(/^DNS lookup of (TXT|MX) \S+ timed out/);
      expect(record(res.body.data, 'dkim').reason).toBe(
        'DNS lookup of TXT mailyard._domainkey.slowdns.example.com timed out',
      );
    } finally {
      await slow.close();
      silent.close();
    }
    // The same domain verifies once DNS answers.
    expect((await verify('slowdns.example.com')).body.data.verified).toBe(true);
  });

  it('verifies an internationalised domain by its A-label records', async () => {
    const data = await add({ domain: 'Bücher.example' });
    await publish('xn--bcher-kva.example', zoneFor(data));
    const res = await verify('bücher.example');
    expect(res.body.data).toMatchObject({
      domain: 'xn--bcher-kva.example',
      unicode_domain: 'bücher.example',
      verified: true,
    });
    const event = await events.waitFor((e) => e.payload.details.domain === 'xn--bcher-kva.example');
    expect(event.payload.details.verified).toBe(true);
  });

  it('background re-check: unchanged results emit nothing; vanished records unverify and emit again', async () => {
    const data = await add({ domain: 'recheck.example.com' });
    await publish('recheck.example.com', zoneFor(data));
    expect((await verify('recheck.example.com')).body.data.verified).toBe(true);
    await events.waitFor((e) => e.payload.details.domain === 'recheck.example.com');
    const deps = { db: gw.ctx.db, config: gw.config, logger: gw.ctx.logger };

    // Not due yet: a verified domain is checked again after a day.
    const early = await runDomainChecks(deps, new Date(Date.now() + DAY / 2));
    const checkedEarly = await lastChecked('recheck.example.com');
    expect(early.failed).toBe(0);

    // Due, records still there: checked, still verified, no event.
    const t1 = new Date(Date.now() + DAY + 60_000);
    const pass1 = await runDomainChecks(deps, t1);
    expect(pass1.checked).toBeGreaterThanOrEqual(1);
    expect(await lastChecked('recheck.example.com')).not.toBe(checkedEarly);
    expect(new Date(await lastChecked('recheck.example.com')).getTime()).toBe(t1.getTime());
    expect(await outboxEventsFor('recheck.example.com')).toHaveLength(1);
    await flushEvents();
    expect(eventsFor('recheck.example.com')).toHaveLength(1);

    // Records vanish: the next daily check unverifies and emits DOMAIN_VERIFICATION(false).
    await publish('recheck.example.com', null);
    const t2 = new Date(t1.getTime() + DAY + 60_000);
    const pass2 = await runDomainChecks(deps, t2);
    expect(pass2.changed).toBeGreaterThanOrEqual(1);
    const flipped = await events.waitFor(
      (e) => e.payload.details.domain === 'recheck.example.com' && !e.payload.details.verified,
    );
    expect(flipped.payload.details).toEqual({
      domain: 'recheck.example.com',
      verified: false,
      mailer_id: data.mailer_id,
      custom_args: {},
      webhook_id: '',
    });
    const details = await request(gw.app).get('/v1/domain/recheck.example.com').set(bearer(key));
    expect(details.body.data.verified).toBe(false);
    expect(record(details.body.data, 'dkim').reason).toMatch(/NXDOMAIN/);

    // Now unverified: re-checked with back-off; records back -> verified again, emitted again.
    await publish('recheck.example.com', zoneFor(data));
    const t3 = new Date(t2.getTime() + gw.config.DOMAIN_CHECK_MAX_BACKOFF_S * 1000 + 60_000);
    await runDomainChecks(deps, t3);
    await events.waitFor(
      (e) => e.payload.details.domain === 'recheck.example.com' && e.occurred_at > flipped.occurred_at,
    );
    expect(eventsFor('recheck.example.com').map((e) => e.payload.details.verified)).toEqual([
      true,
      false,
      true,
    ]);
  });

  it('re-checks unverified domains with back-off and stops after the unverified window', async () => {
    const data = await add({ domain: 'late.example.com' });
    const deps = { db: gw.ctx.db, config: gw.config, logger: gw.ctx.logger };
    const created = new Date(data.created_at).getTime();
    const first = created + gw.config.DOMAIN_CHECK_FIRST_DELAY_S * 1000;
    expect(await nextCheckAt('late.example.com')).toBe(first);

    await runDomainChecks(deps, new Date(first));
    const second = await nextCheckAt('late.example.com');
    expect(second).toBeGreaterThan(first);

    // Records published late, within the window: found by the background check, event emitted.
    await publish('late.example.com', zoneFor(data));
    await runDomainChecks(deps, new Date(second!));
    await events.waitFor(
      (e) => e.payload.details.domain === 'late.example.com' && e.payload.details.verified,
    );

    // An unverified domain past its 72 h window is no longer scheduled.
    const stale = await add({ domain: 'stale.example.com' });
    const end = new Date(
      new Date(stale.created_at).getTime() + gw.config.DOMAIN_CHECK_UNVERIFIED_WINDOW_S * 1000,
    );
    await gw.ctx.db.query("UPDATE domains SET next_check_at = $1 WHERE name = 'stale.example.com'", [end]);
    await runDomainChecks(deps, end);
    expect(await nextCheckAt('stale.example.com')).toBeNull();
  });

  it('a background check without a DNS answer keeps a verified domain verified and retries soon', async () => {
    const data = await add({ domain: 'flaky.example.com' });
    await publish('flaky.example.com', zoneFor(data));
    expect((await verify('flaky.example.com')).body.data.verified).toBe(true);
    const silent: Socket = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    silent.on('message', () => {});
    const resolver = new Resolver({ timeout: 300, tries: 1 });
    resolver.setServers([`127.0.0.1:${(silent.address() as AddressInfo).port}`]);
    try {
      const when = new Date(Date.now() + 3 * DAY);
      const pass = await runDomainChecks(
        { db: gw.ctx.db, config: gw.config, logger: gw.ctx.logger, resolver },
        when,
      );
      expect(pass.inconclusive).toBeGreaterThanOrEqual(1);
      expect(pass.changed).toBe(0);
      const details = await request(gw.app).get('/v1/domain/flaky.example.com').set(bearer(key));
      expect(details.body.data.verified).toBe(true);
      expect(await nextCheckAt('flaky.example.com')).toBe(
        when.getTime() + gw.config.DOMAIN_CHECK_FIRST_DELAY_S * 1000,
      );
    } finally {
      silent.close();
    }
    expect(await outboxEventsFor('flaky.example.com')).toHaveLength(1);
    await flushEvents();
    expect(eventsFor('flaky.example.com').map((e) => e.payload.details.verified)).toEqual([true]);
  });

  it('the background job runs on one replica only (kv leader lock)', async () => {
    const job = domainCheckJob(
      { db: gw.ctx.db, config: gw.config, logger: gw.ctx.logger, kv: gw.ctx.kv },
      60_000,
    );
    const held = await gw.ctx.kv.acquireLock('domain-checks:leader', 10_000);
    expect(held).not.toBeNull();
    expect(await job.runOnce()).toBe('skipped');
    await gw.ctx.kv.releaseLock('domain-checks:leader', held!);
    expect(await job.runOnce()).toBe('ran');
    await job.stop();
  });

  async function lastChecked(name: string): Promise<string> {
    const { rows } = await gw.ctx.db.query<{ last_checked_at: Date | null }>(
      'SELECT last_checked_at FROM domains WHERE name = $1 AND deleted_at IS NULL',
      [name],
    );
    return rows[0]?.last_checked_at?.toISOString() ?? '';
  }
  async function nextCheckAt(name: string): Promise<number | null> {
    const { rows } = await gw.ctx.db.query<{ next_check_at: Date | null }>(
      'SELECT next_check_at FROM domains WHERE name = $1 AND deleted_at IS NULL',
      [name],
    );
    return rows[0]?.next_check_at?.getTime() ?? null;
  }
});
