/**
 * Open/click/unsubscribe tracking end to end: a tracked send through the gateway API and the
 * send service to a real SMTP receiver; the pixel and rewritten links read back from the
 * received message and requested over HTTP from the tracking service; the events, log status,
 * bus messages and suppressions checked. Runs on the real servers (the tracking service with a
 * context of its own, as its own process would have) and on the embedded defaults.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EmailEvent } from '@mailyard/contracts';
import { buildGatewayApp } from '@mailyard/gateway';
import {
  type RunningService,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  loadConfig,
  openContext,
  signLinkToken,
} from '@mailyard/platform';
import { start as startSend } from '@mailyard/send';
import { createTenant } from '@mailyard/store';
import { type EmailEventCollector, collectEmailEvents } from '@mailyard/testkit/email-events';
import { eventually } from '@mailyard/testkit/eventually';
import { insertSmtpMailer } from '@mailyard/testkit/fixtures';
import { parseMessage } from '@mailyard/testkit/mime';
import { cityRecord, writeMmdb } from '@mailyard/testkit/mmdb';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { freePort } from '@mailyard/testkit/process';
import { createTestDatabase, createTestVhost, serverEnv } from '@mailyard/testkit/servers';
import { trackedSendEnv } from '@mailyard/testkit/tracked-send-env';
import { start as startTracking } from '@mailyard/tracking';
import request from 'supertest';

const IPHONE_MAIL =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 16_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148';
const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
/** A WordPress password-reset link as it appears in HTML: `&` written as `&amp;`. */
const WP_HREF = 'https://blog.example/wp-login.php?action=rp&amp;key=Xy1%2Bz&amp;login=ada&amp;_wpnonce=9f2e';
const WP_URL = 'https://blog.example/wp-login.php?action=rp&key=Xy1%2Bz&login=ada&_wpnonce=9f2e';
const TEXT_URL = 'https://shop.example/p?a=1&b=2';

/**
 * On the servers, GEOIP_DB points at a MaxMind-format database the test writes; embedded runs
 * without one (empty geo fields).
 */
export function describeTracking(mode: 'embedded' | 'servers'): void {
  jest.setTimeout(120_000);
  const withGeo = mode === 'servers';
  const geoDir = mkdtempSync(join(tmpdir(), 'mailyard-tracking-'));
  const expectedGeo = withGeo
    ? { country: 'NL', region: 'NH', city: 'Amsterdam', time_zone: 'Europe/Amsterdam' }
    : { country: '', region: '', city: '', time_zone: '' };

  let sendCtx: ServiceContext;
  let trackCtx: ServiceContext;
  let send: RunningService;
  let tracking: RunningService;
  let receiver: SmtpReceiver;
  let gateway: ReturnType<typeof buildGatewayApp>;
  let trackingBase: string;
  let drop: () => Promise<void> = async () => {};
  let busEvents: EmailEventCollector;

  beforeAll(async () => {
    receiver = await startSmtpReceiver();
    const trackingPort = await freePort();
    let storeEnv: Record<string, string>;
    if (mode === 'servers') {
      const db = await createTestDatabase();
      const vhost = createTestVhost();
      storeEnv = serverEnv(db, vhost);
      drop = async () => {
        await db.drop();
        await vhost.drop();
      };
    } else {
      storeEnv = {
        DATABASE_URL: '',
        AMQP_URL: '',
        REDIS_URL: '',
        DATA_DIR: 'memory://',
        SECRET_KEY: '5c'.repeat(32),
      };
    }
    // TRACKING_BASE_URL unset (trackedSendEnv): http://127.0.0.1:<TRACKING_PORT> is what the links use.
    const config = configFrom({ ...storeEnv, ...trackedSendEnv(trackingPort) });
    sendCtx = await openContext(config, createLogger('tracking-test', 'error'));
    trackCtx =
      mode === 'servers' ? await openContext(config, createLogger('tracking-test', 'error')) : sendCtx;
    busEvents = await collectEmailEvents(sendCtx.bus, `tracking-test-${Date.now()}`);
    send = await startSend(sendCtx);
    const geoDb = join(geoDir, 'city.mmdb');
    writeMmdb(geoDb, {
      '203.0.113.0/24': cityRecord({
        country: 'NL',
        region: 'NH',
        city: 'Amsterdam',
        timeZone: 'Europe/Amsterdam',
      }),
    });
    // The tracking service's own variables, in the environment of its context only.
    const trackConfig = loadConfig({
      ...trackCtx.config.env,
      TRACKING_TRUST_PROXY: 'loopback',
      ...(withGeo ? { GEOIP_DB: geoDb } : {}),
    });
    tracking = await startTracking({ ...trackCtx, config: trackConfig });
    const stopTracking = tracking.stop.bind(tracking);
    tracking.stop = async () => {
      await busEvents.cancel();
      await stopTracking();
    };
    gateway = buildGatewayApp(sendCtx);
    trackingBase = `http://127.0.0.1:${trackingPort}`;
  });

  afterAll(async () => {
    await tracking?.stop();
    await send?.stop();
    if (trackCtx && trackCtx !== sendCtx) await closeContext(trackCtx);
    if (sendCtx) await closeContext(sendCtx);
    await receiver?.close();
    await drop();
    rmSync(geoDir, { recursive: true, force: true });
  });

  async function newTenant() {
    const t = await createTenant(sendCtx.db, {
      name: `t-${Math.random().toString(36).slice(2, 8)}`,
      tier: 'enterprise',
    });
    const mailerId = await insertSmtpMailer(sendCtx.db, sendCtx.sealer, t.id, { port: receiver.port });
    return { id: t.id, auth: { Authorization: `Bearer ${t.apiKey}` }, mailerId };
  }

  async function sendMail(
    tenant: Awaited<ReturnType<typeof newTenant>>,
    to: string,
    tracked: boolean,
  ): Promise<string> {
    const res = await request(gateway)
      .post('/v1/email/send')
      .set(tenant.auth)
      .send({
        from: { email: 'news@sender.example' },
        to: [{ email: to }],
        mailer_id: tenant.mailerId,
        subject: 'Tracked',
        content: [
          { type: 'text/plain', value: `Shop at ${TEXT_URL}. Mail mailto:help@sender.example` },
          {
            type: 'text/html',
            value: `<html><body><p>Hi</p><a href="${WP_HREF}">Reset</a> <a href="mailto:help@sender.example">Help</a> <a href="#top">Top</a></body></html>`,
          },
        ],
        custom_args: { campaign: 'spring' },
        ...(tracked
          ? { settings: { open_tracking: { enable: true }, click_tracking: { enable: true } } }
          : {}),
      })
      .expect(200);
    return res.body.ref_id;
  }

  const messageTo = (to: string, n = 1) =>
    eventually(async () => {
      const all = receiver.messages.filter((m) => m.to.includes(to));
      return all.length >= n ? all[n - 1] : null;
    }, `message ${n} to ${to}`);

  async function logOf(tenant: { auth: Record<string, string> }, refId: string) {
    const res = await request(gateway).get('/v1/email/logs').query({ refId }).set(tenant.auth).expect(200);
    return res.body.data[0] as { status: string; last_event: string; failure_reason: string };
  }

  const statusIs = (tenant: { auth: Record<string, string> }, refId: string, status: string) =>
    eventually(async () => (await logOf(tenant, refId))?.status === status, `log status ${status}`);

  const eventsOf = async (refId: string, event: string) =>
    (
      await sendCtx.db.query<{ payload: EmailEvent }>(
        'SELECT payload FROM email_events WHERE ref_id = $1 AND event = $2 ORDER BY event_at',
        [refId, event],
      )
    ).rows.map((r) => r.payload);

  const path = (url: string) => {
    expect(url.startsWith(`${trackingBase}/`)).toBe(true);
    return url.slice(trackingBase.length);
  };

  it('tracks opens and clicks, redirects exactly, refuses tampered tokens and unsubscribes in one click', async () => {
    const tenant = await newTenant();
    const refId = await sendMail(tenant, 'reader@example.com', true);
    const received = parseMessage((await messageTo('reader@example.com')).raw);

    // RFC 8058 headers on a tracked send.
    const listUnsub = received.headers['list-unsubscribe']!;
    expect(listUnsub).toMatch(
      new RegExp(
        `^<${trackingBase}/u/[A-Za-z0-9_.-]+>, <mailto:unsubscribe\\+[0-9A-Z]{26}\\.[a-z2-7]{16}@mailyard\\.test\\?subject=unsubscribe>$`,
      ),
    );
    expect(received.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');

    const html = received.parts.find((p) => p.type === 'text/html')!.text;
    const text = received.parts.find((p) => p.type === 'text/plain')!.text;
    const pixel = /<img src="([^"]+\/o\/[^"]+)" width="1" height="1"/.exec(html)?.[1];
    const htmlClicks = [...html.matchAll(/href="([^"]+\/c\/[^"]+)"/g)].map((m) => m[1]!);
    const textClick = new RegExp(`${trackingBase}/c/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+`).exec(text)?.[0];
    expect(pixel).toBeDefined();
    expect(htmlClicks).toHaveLength(1);
    expect(textClick).toBeDefined();
    expect(html).toContain('href="mailto:help@sender.example"');
    expect(html).toContain('href="#top"');
    expect(html).not.toContain('blog.example');
    expect(text).not.toContain('shop.example');

    await statusIs(tenant, refId, 'MAIL_DELIVERED');

    // Open: a GIF that is not cached, MAIL_OPENED with the proxy's client IP and the mail client.
    const open = await request(trackingBase)
      .get(path(pixel!))
      .set('User-Agent', IPHONE_MAIL)
      .set('X-Forwarded-For', '203.0.113.7')
      .expect(200);
    expect(open.headers['content-type']).toBe('image/gif');
    expect(open.headers['cache-control']).toContain('no-store');
    expect(Buffer.from(open.body).subarray(0, 6).toString()).toBe('GIF89a');
    await statusIs(tenant, refId, 'MAIL_OPENED');
    const [opened] = await eventsOf(refId, 'MAIL_OPENED');
    expect(opened).toMatchObject({
      event: 'MAIL_OPENED',
      success: true,
      details: {
        ref_id: refId,
        mailer_id: tenant.mailerId,
        email: ['reader@example.com'],
        custom_args: { campaign: 'spring' },
        message_id: expect.stringMatching(/^<svc_mailer_/),
        failed_reason: '',
        tracking: {
          ip: '203.0.113.7',
          user_agent: IPHONE_MAIL,
          browser_name: 'Apple Mail',
          os: 'iOS 16.5',
          device_type: 'mobile',
          platform: 'email client',
          url: '',
          ...expectedGeo,
          bot: false,
        },
      },
    });
    expect(opened!.details.tracking.time).toMatch(/^\d{4}-\d\d-\d\dT/);

    // Click (HTML): 302 to exactly the decoded WordPress URL.
    const click = await request(trackingBase).get(path(htmlClicks[0]!)).set('User-Agent', CHROME).expect(302);
    expect(click.headers.location).toBe(WP_URL);
    await statusIs(tenant, refId, 'MAIL_CLICKED');
    const [clicked] = await eventsOf(refId, 'MAIL_CLICKED');
    expect(clicked!.details.tracking).toMatchObject({
      url: WP_URL,
      browser_name: 'Chrome',
      platform: 'browser',
      ip: '127.0.0.1',
      country: '',
    });

    // Click (text part).
    const textHit = await request(trackingBase).get(path(textClick!)).expect(302);
    expect(textHit.headers.location).toBe(TEXT_URL);

    // A second open is its own event; the status does not move back.
    await request(trackingBase).get(path(pixel!)).set('User-Agent', 'Mozilla/5.0').expect(200);
    const opens = await eventually(async () => {
      const all = await eventsOf(refId, 'MAIL_OPENED');
      return all.length === 2 ? all : null;
    }, 'second open');
    expect(opens[1]!.details.tracking).toMatchObject({
      browser_name: 'Apple Mail Privacy Protection',
      bot: true,
    });
    expect(opens[0]!.details.event_at).not.toBe(opens[1]!.details.event_at);
    expect((await logOf(tenant, refId)).status).toBe('MAIL_CLICKED');

    // Tampered or misused tokens: 404, no redirect, nothing recorded. The forged ones carry this
    // recipient's real claims with another redirect target, well-formed: only the MAC refuses them.
    const token = htmlClicks[0]!.split('/c/')[1]!;
    const [body, sig] = token.split('.') as [string, string];
    const fields = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    expect(fields).toEqual([1, 'c', tenant.id, refId, expect.any(String), 'reader@example.com', WP_URL]);
    const evil = [...fields.slice(0, 6), 'https://evil.example/login'];
    const claims = {
      kind: 'click' as const,
      tenantId: tenant.id,
      refId,
      logId: fields[4],
      email: 'reader@example.com',
      url: 'https://evil.example/login',
    };
    const tampered = `${Buffer.from(JSON.stringify(evil)).toString('base64url')}.${sig}`;
    const anotherKey = signLinkToken(randomBytes(32), claims);
    for (const bad of [
      `/c/${tampered}`,
      `/c/${anotherKey}`,
      `/c/${token.slice(0, -1)}`,
      `/c/${pixel!.split('/o/')[1]}`,
      '/c/nope',
      `/o/${token}`,
    ]) {
      const res = await request(trackingBase).get(bad);
      expect(res.status).toBe(404);
      expect(res.headers.location).toBeUndefined();
    }
    expect(await eventsOf(refId, 'MAIL_CLICKED')).toHaveLength(2);

    // The events reached the bus (outbox -> relay -> events exchange).
    await eventually(
      async () =>
        busEvents.events().filter((e) => e.details.ref_id === refId && e.event === 'MAIL_OPENED').length ===
          2 &&
        busEvents.events().filter((e) => e.details.ref_id === refId && e.event === 'MAIL_CLICKED').length ===
          2,
      'tracking events on the bus',
    );
    const busClick = busEvents.events().find((e) => e.details.ref_id === refId && e.event === 'MAIL_CLICKED');
    expect(busClick!.details.tracking.url).toBe(WP_URL);

    // Unsubscribe: the GET page only asks; the one-click POST suppresses and records.
    const unsubUrl = /^<([^>]+)>/.exec(listUnsub)![1]!;
    const page = await request(trackingBase).get(path(unsubUrl)).expect(200);
    expect(page.text).toContain('<form method="post"');
    expect(page.text).toContain('reader@example.com');
    expect(await eventsOf(refId, 'MAIL_UNSUBSCRIBED')).toHaveLength(0);
    await request(trackingBase)
      .post(path(unsubUrl))
      .type('form')
      .send('List-Unsubscribe=One-Click')
      .expect(200);
    await statusIs(tenant, refId, 'MAIL_UNSUBSCRIBED');
    const [unsub] = await eventsOf(refId, 'MAIL_UNSUBSCRIBED');
    expect(unsub).toMatchObject({ success: true, details: { email: ['reader@example.com'] } });
    // Again: still suppressed, no second event.
    await request(trackingBase)
      .post(path(unsubUrl))
      .type('form')
      .send('List-Unsubscribe=One-Click')
      .expect(200);
    expect(await eventsOf(refId, 'MAIL_UNSUBSCRIBED')).toHaveLength(1);

    // A later send to the address is suppressed for this tenant only.
    const later = await sendMail(tenant, 'reader@example.com', true);
    await eventually(
      async () => (await logOf(tenant, later))?.failure_reason === 'recipient unsubscribed',
      'suppressed',
    );
    expect((await logOf(tenant, later)).status).toBe('FAILED');

    const other = await newTenant();
    const otherRef = await sendMail(other, 'reader@example.com', false);
    await statusIs(other, otherRef, 'MAIL_DELIVERED');
    const untracked = parseMessage((await messageTo('reader@example.com', 2)).raw);
    expect(untracked.headers['list-unsubscribe']).toBeUndefined();
    expect(untracked.parts.find((p) => p.type === 'text/html')!.text).toContain(`href="${WP_HREF}"`);
    expect(receiver.messages.filter((m) => m.to.includes('reader@example.com'))).toHaveLength(2);
  });

  it('serves health and readiness on the tracking port', async () => {
    await request(trackingBase).get('/healthz').expect(200);
    const ready = await request(trackingBase).get('/readyz').expect(200);
    expect(ready.body.status).toBe('ready');
  });
}
