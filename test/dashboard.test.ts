/**
 * The dashboard (GET /ui, docs/dashboard.md) and /docs, tried as a new user would in a real
 * browser: Debian's Chromium driven by playwright-core, against the compiled all-in-one
 * (`pnpm start`: scripts/run-dist.mjs builds dist/bin and dist/ui when stale) on embedded
 * defaults, with a real SMTP server receiving the mail and a real HTTP server receiving webhooks.
 * Sign-in refuses a wrong key and accepts the right one; the navigation names every page; a sent
 * email is listed in Messages and its page shows the delivery; a webhook delivery is replayed; a
 * suppression is added and removed; a domain's records are shown with its deliverability (a
 * pause, seeded straight into the embedded database with the server stopped, and its DMARC and
 * TLS reports; `Resume sending` ends the pause); Overview draws its chart;
 * Sign out returns to the form; /docs renders the API with "Try it out". Throughout: no console
 * error, no page error, no request to another host. Screenshots go to docs/dashboard/ when run
 * with DASHBOARD_SCREENSHOTS=1 (a temporary folder otherwise, so a test run changes no tracked file).
 * Also checked over HTTP: the CSP and cache headers, compressed answers, and the app's
 * JavaScript budget (250 KB compressed) on the built files.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Mailyard } from '@mailyard/client';
import { openDatabase } from '@mailyard/platform';
import {
  type Browser,
  type BrowserContext,
  type Page,
  type Watched,
  launchChromium,
  watch,
} from '@mailyard/testkit/browser';
import { eventually } from '@mailyard/testkit/eventually';
import { parseMessage } from '@mailyard/testkit/mime';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { REPO_ROOT, type Spawned, apiUrl, freePort, spawnCompiled } from '@mailyard/testkit/process';
import { insertDmarcReport, insertTlsReport } from '../services/gateway/test/support/report-rows';

jest.setTimeout(300_000);

const KEY = 'myk_dashboard_test_key_0123456789abcdefghij';
/** docs/dashboard/ with DASHBOARD_SCREENSHOTS=1 (to refresh the docs' pictures), else a temporary folder. */
const SHOTS =
  process.env.DASHBOARD_SCREENSHOTS === '1'
    ? join(REPO_ROOT, 'docs', 'dashboard')
    : mkdtempSync(join(tmpdir(), 'mailyard-shots-'));
const JS_BUDGET_BYTES = 250 * 1024;
const IPHONE_MAIL =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 16_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148';

let dataDir: string;
let smtp: SmtpReceiver;
let hooks: WebhookReceiver;
let server: Spawned | undefined;
let api: string;
let client: Mailyard;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let watched: Watched;
let refId: string;
let mailerId: string;

/** The 401s of the wrong-key sign-in: Chromium logs every failed fetch as a console error. */
const expectedConsole: RegExp[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'mailyard-dashboard-'));
  [smtp, hooks] = await Promise.all([
    startSmtpReceiver({ auth: { user: 'dash-user', pass: 'dash-pass' } }),
    startWebhookReceiver(),
  ]);
  const env = {
    DATA_DIR: dataDir,
    PORT: '0',
    // A known port: the open pixel's URL is http://127.0.0.1:<TRACKING_PORT>/o/... (embedded default).
    TRACKING_PORT: String(await freePort()),
    SMTP_PORT: '0',
    DATABASE_URL: '',
    AMQP_URL: '',
    REDIS_URL: '',
    BOOTSTRAP_API_KEY: KEY,
    MAILER_ALLOW_PRIVATE_HOSTS: '1',
    WEBHOOK_ALLOW_INSECURE: '1',
  };
  const start = async () => {
    server = spawnCompiled('mailyard', env);
    await server.waitFor(/Mailyard mailyard started \(embedded mode\)[\s\S]*kv:/, 240_000);
    api = apiUrl(server).replace('localhost', '127.0.0.1');
    client = new Mailyard({ apiKey: KEY, basePath: api });
  };
  await start();

  // What the pages will show: a delivered email, its webhook delivery, a domain.
  const { mailer_id } = await client.mailers.createSmtp({
    name: 'Dashboard relay',
    email: 'me@dash.test',
    connection_type: 'basic',
    config: { host: '127.0.0.1', port: smtp.port, username: 'dash-user', password: 'dash-pass' },
  } as Parameters<Mailyard['mailers']['createSmtp']>[0]);
  mailerId = mailer_id;
  await client.webhooks.register({
    webhook_url: hooks.url('/events'),
    event: 'EMAIL_EVENT',
    method: 'POST',
    webhook_options: { events: { delivery: true } },
  } as Parameters<Mailyard['webhooks']['register']>[0]);
  const sent = await client.emails.send({
    mailer_id,
    from: { email: 'me@dash.test' },
    to: [{ email: 'reader@example.test' }],
    subject: 'Hello from the dashboard test',
    content: [
      { type: 'text/plain', value: 'Shown in Messages.' },
      { type: 'text/html', value: '<p>Shown in Messages.</p>' },
    ],
    settings: { open_tracking: { enable: true } },
  } as Parameters<Mailyard['emails']['send']>[0]);
  refId = sent.ref_id;
  await eventually(async () => {
    const row = (await client.logs.list({ refId })).data[0];
    return row?.status === 'MAIL_DELIVERED';
  }, 'the email delivered');
  // The reader opens it on an iPhone: the timeline shows the open with its device.
  const html = parseMessage((await eventually(() => smtp.messages[0], 'the email received')).raw).parts.find(
    (p) => p.type === 'text/html',
  )!.text;
  const pixel = /<img src="([^"]+\/o\/[^"]+)" width="1" height="1"/.exec(html)![1]!;
  expect((await fetch(pixel, { headers: { 'User-Agent': IPHONE_MAIL } })).status).toBe(200);
  await eventually(
    async () => (await client.logs.list({ refId })).data[0]?.status === 'MAIL_OPENED',
    'the open',
  );
  await eventually(() => hooks.deliveries('/events').length >= 1, 'the webhook delivery received');
  await eventually(
    async () => (await client.webhooks.deliveries.list()).data.some((d) => d.status === 'delivered'),
    'the webhook delivery recorded as delivered',
  );
  await client.domains.add({ domain: 'news.dash.test' });

  // Its deliverability: a pause and a DMARC and a TLS report of yesterday, as the reputation
  // writer and the MX intake store them. PGlite serves one process: the server stops meanwhile.
  await stop();
  const db = await openDatabase({ DATA_DIR: dataDir, DATABASE_URL: '', DB_POOL_SIZE: 1 });
  try {
    const { rows } = await db.query<{ id: string; tenant_id: string }>(
      "SELECT id, tenant_id FROM domains WHERE name = 'news.dash.test'",
    );
    const { id: domainId, tenant_id: tenantId } = rows[0]!;
    await db.query(
      `INSERT INTO sending_pauses (tenant_id, scope, key, metric, rate, window_n, threshold)
       VALUES ($1, 'domain', 'news.dash.test', 'invalid_recipient_bounce_rate', 0.062, 1000, 0.05)`,
      [tenantId],
    );
    const day = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    await insertDmarcReport(db, {
      tenantId,
      domainId,
      orgName: 'google.com',
      begin: `${day}T00:00:00Z`,
      end: `${day}T23:59:59Z`,
      rows: [
        { source_ip: '192.0.2.10', count: 180, dkim: 'pass', spf: 'pass', header_from: 'news.dash.test' },
        { source_ip: '198.51.100.7', count: 20, disposition: 'quarantine', dkim: 'fail', spf: 'fail' },
      ],
    });
    await insertTlsReport(db, {
      tenantId,
      domainId,
      orgName: 'google.com',
      start: `${day}T00:00:00Z`,
      end: `${day}T23:59:59Z`,
      policies: [
        {
          successful: 4200,
          failed: 12,
          failureDetails: [
            { result_type: 'certificate-expired', failed_session_count: 10 },
            { result_type: 'starttls-not-supported', failed_session_count: 2 },
          ],
        },
      ],
    });
  } finally {
    await db.close();
  }
  await start();

  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1180, height: 760 }, colorScheme: 'light' });
  page = await context.newPage();
  watched = await watch(context, page);
});

async function stop() {
  if (server && server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
}

afterAll(async () => {
  await browser?.close();
  await stop();
  await Promise.all([smtp?.close(), hooks?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
  if (process.env.DASHBOARD_SCREENSHOTS !== '1') rmSync(SHOTS, { recursive: true, force: true });
});

const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`) });
const nav = (name: string) =>
  page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

describe('the dashboard in Chromium', () => {
  it('refuses a wrong key on the page, then signs in with the right one', async () => {
    await page.goto(`${api}/ui`);
    const field = page.getByLabel('API key');
    await field.fill('myk_wrong_key_0000000000000000000000000000');
    expectedConsole.push(/status of 401/);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'This API key was refused' }).waitFor();
    await shot('sign-in-refused');

    await field.fill(KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(await page.evaluate("sessionStorage.getItem('mailyard.apiKey')")).toBe(KEY);
    expect(await page.evaluate('localStorage.length + document.cookie.length')).toBe(0);
    for (const name of [
      'Overview',
      'Messages',
      'Webhooks',
      'Suppressions',
      'Domains',
      'Mailers',
      'Inbound',
      'Backfill',
      'Keys',
      'Audit',
    ])
      expect(await nav(name).count()).toBe(1);
  });

  it('Overview draws the per-day chart with the totals, and its live feed shows a new delivery', async () => {
    await page.locator('.chart canvas').first().waitFor();
    await page.locator('.totals').getByText('Delivered').waitFor();
    expect(await page.locator('.chart .u-legend').innerText()).toContain('Bounced');
    await page.getByText('Connected: new events appear here').waitFor();
    await client.emails.send({
      mailer_id: mailerId,
      from: { email: 'me@dash.test' },
      to: [{ email: 'second@example.test' }],
      subject: 'Seen live',
      content: [{ type: 'text/plain', value: 'Live.' }],
    } as Parameters<Mailyard['emails']['send']>[0]);
    await page.locator('.feed li', { hasText: 'second@example.test' }).getByText('MAIL_DELIVERED').waitFor();
    await shot('overview');
  });

  it('lists the sent email in Messages; its page shows the delivery and the open (device) in the timeline', async () => {
    await nav('Messages').click();
    const link = page.getByRole('link', { name: 'reader@example.test' });
    await link.waitFor();
    await shot('messages');
    await link.click();
    await page.getByRole('heading', { name: `Message ${refId}` }).waitFor();
    await page.locator('.timeline').getByText('MAIL_DELIVERED').waitFor();
    await page.locator('.timeline').getByText('MAIL_OPENED').waitFor();
    expect(await page.locator('.timeline').innerText()).toMatch(/Device\s+.*iOS/);
    expect(await page.locator('body').innerText()).toContain('Hello from the dashboard test');
    await shot('message');
  });

  it('replays a webhook delivery from Webhooks', async () => {
    await nav('Webhooks').click();
    await page.getByText(hooks.url('/events')).waitFor();
    const before = hooks.to('/events').length;
    const replay = page.getByRole('button', { name: /^Replay delivery / }).first();
    await replay.waitFor();
    await shot('webhooks');
    await replay.click();
    await page.getByText(/Replay queued as whd_/).waitFor();
    await eventually(() => hooks.to('/events').length > before, 'the replay received by the webhook');
  });

  it('adds a suppression and removes it from the page', async () => {
    await nav('Suppressions').click();
    await page.getByText('The list is empty').waitFor();
    await page.getByLabel('Add addresses').fill('blocked@example.test');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    const remove = page.getByRole('button', { name: 'Remove blocked@example.test' });
    await remove.waitFor();
    // The list table (ui.tsx DataTable): column headers, the last ("Actions") for screen readers only.
    expect(await page.getByRole('columnheader').allTextContents()).toEqual([
      'Address',
      'Reason',
      'Since',
      'Actions',
    ]);
    expect(await page.locator('th[scope="col"] .sr-only').allTextContents()).toEqual(['Actions']);
    await shot('suppressions');
    await remove.click();
    await page.getByText('blocked@example.test removed').waitFor();
    await page.getByText('The list is empty').waitFor();
    await expect(client.suppressions.get('blocked@example.test')).rejects.toMatchObject({ status: 404 });
  });

  it("shows a domain's records to publish, with copy buttons and Verify", async () => {
    await nav('Domains').click();
    await page.getByRole('heading', { name: /news\.dash\.test/ }).waitFor();
    await page
      .getByText(/_domainkey\.news\.dash\.test/)
      .first()
      .waitFor();
    expect(await page.getByRole('button', { name: /^Copy dkim/ }).count()).toBeGreaterThan(0);
    expect(await page.getByRole('button', { name: 'Verify news.dash.test' }).count()).toBe(1);
    // A DataTable with a caption names its table.
    expect(await page.getByRole('table', { name: 'Records to publish' }).count()).toBe(1);
    await shot('domains');
  });

  it("shows the domain's deliverability: its pause, DMARC and TLS reports; Resume sending ends the pause", async () => {
    const message =
      'Sending is paused for news.dash.test: 6.2% invalid-recipient bounces over the last 1000 emails';
    const paused = page.getByRole('alert').filter({ hasText: message });
    await paused.waitFor();
    expect(await page.locator('.deliverability .totals').first().innerText()).toMatch(
      /Invalid-recipient bounces \(pause above 5\.0%\)\s+0\.0%\s+Complaints \(pause above 0\.10%\)\s+0\.0%/,
    );
    // DMARC: 1 report, 200 messages, 180 passing (90.0%), and its two sources, largest first.
    const dmarc = page.locator('.deliverability .totals').nth(1);
    await dmarc.waitFor();
    expect(await dmarc.innerText()).toMatch(
      /Reports\s+1\s+Messages\s+200\s+DMARC pass\s+90\.0%\s+DKIM aligned\s+90\.0%\s+SPF aligned\s+90\.0%/,
    );
    const sources = page.getByRole('table', { name: 'Top sources of news.dash.test' });
    expect(await sources.getByRole('row').allInnerTexts()).toEqual([
      expect.stringMatching(/Source IP\s+Messages\s+Disposition\s+DKIM\s+SPF\s+Reporter/),
      expect.stringMatching(/192\.0\.2\.10\s+180\s+none\s+pass\s+pass\s+google\.com/),
      expect.stringMatching(/198\.51\.100\.7\s+20\s+quarantine\s+fail\s+fail\s+google\.com/),
    ]);
    // TLS: the sessions and failure types of yesterday's report.
    expect(await page.locator('.deliverability .totals').nth(2).innerText()).toMatch(
      /Reports\s+1\s+Successful sessions\s+4,200\s+Failed sessions\s+12/,
    );
    await page.getByText('Failures: certificate-expired 10, starttls-not-supported 2').waitFor();
    await page.getByRole('heading', { name: 'Reputation' }).evaluate((h) => h.scrollIntoView());
    await shot('domain-deliverability');

    // A read key sees the pause, and the API's 403 when it presses Resume sending; the pause stays.
    const { api_key: readKey } = await client.keys.create({ name: 'dashboard read', scope: 'read' });
    const reader = await browser.newContext({ viewport: { width: 1180, height: 760 } });
    const rp = await reader.newPage();
    const rw = await watch(reader, rp);
    await rp.goto(`${api}/ui/domains`);
    await rp.evaluate(`sessionStorage.setItem('mailyard.apiKey', ${JSON.stringify(readKey)})`);
    await rp.reload();
    await rp.getByRole('alert').filter({ hasText: message }).waitFor();
    await rp.getByRole('button', { name: 'Resume sending for news.dash.test' }).click();
    await rp
      .getByRole('alert')
      .filter({ hasText: 'This API key is not allowed to change configuration [HTTP 403]' })
      .waitFor();
    await reader.close();
    expect(rw.consoleErrors).toEqual([expect.stringMatching(/status of 403/)]);
    expect({ ...rw, consoleErrors: [] }).toEqual({ consoleErrors: [], pageErrors: [], foreignRequests: [] });
    expect((await client.reputation.get('news.dash.test')).data.paused).not.toBeNull();

    await page.getByRole('button', { name: 'Resume sending for news.dash.test' }).click();
    await paused.waitFor({ state: 'detached' });
    expect((await client.reputation.get('news.dash.test')).data.paused).toBeNull();
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it('opens every other page without an error', async () => {
    for (const name of ['Mailers', 'Inbound', 'Backfill', 'Keys', 'Audit']) {
      await nav(name).click();
      await page.getByRole('heading', { name, level: 1 }).waitFor();
      await page.getByText('Loading…').waitFor({ state: 'detached' });
      expect({ name, alerts: await page.getByRole('alert').allInnerTexts() }).toEqual({ name, alerts: [] });
    }
    await nav('Mailers').click();
    await page.getByText('Dashboard relay').waitFor();
    await shot('mailers');
  });

  it('is usable by keyboard: Tab reaches the navigation with a visible focus ring', async () => {
    await page.goto(`${api}/ui`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.keyboard.press('Tab'); // skip link
    await page.keyboard.press('Tab'); // first navigation link
    const focused = await page.evaluate(
      '({ text: document.activeElement.textContent, outline: getComputedStyle(document.activeElement).outlineStyle })',
    );
    expect(focused).toEqual({ text: 'Overview', outline: 'solid' });
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  });

  it('Sign out returns to the sign-in form and forgets the key', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });

  it('renders the API at /docs (Swagger UI, local assets) with "Try it out"', async () => {
    await page.goto(`${api}/docs`);
    const op = page.locator('.opblock-summary-path', { hasText: '/v1/email/logs/{refId}/events' }).first();
    await op.waitFor();
    await op.click();
    await page.getByRole('button', { name: 'Try it out' }).first().waitFor();
    await page.locator('.opblock-tag', { hasText: 'Logs' }).first().scrollIntoViewIfNeeded();
    await shot('docs');
  });

  it('in the dark colour scheme too', async () => {
    const dark = await browser.newContext({ viewport: { width: 1180, height: 760 }, colorScheme: 'dark' });
    const p = await dark.newPage();
    const w = await watch(dark, p);
    await p.goto(`${api}/ui`);
    await p.evaluate(`sessionStorage.setItem('mailyard.apiKey', ${JSON.stringify(KEY)})`);
    await p.reload();
    await p.locator('.chart canvas').first().waitFor();
    const bg = await p.evaluate('getComputedStyle(document.body).backgroundColor');
    expect(bg).toBe('rgb(18, 22, 28)');
    await p.screenshot({ path: join(SHOTS, 'overview-dark.png') });
    await dark.close();
    expect(w).toEqual({ consoleErrors: [], pageErrors: [], foreignRequests: [] });
  });

  it('had no console error (but the refused sign-in), no page error, no request to another host', () => {
    const unexpected = watched.consoleErrors.filter((e) => !expectedConsole.some((re) => re.test(e)));
    expect({ ...watched, consoleErrors: unexpected }).toEqual({
      consoleErrors: [],
      pageErrors: [],
      foreignRequests: [],
    });
    // The one allowed console error did happen (the check itself sees console errors).
    expect(watched.consoleErrors.filter((e) => /status of 401/.test(e)).length).toBeGreaterThan(0);
  });
});

describe('serving', () => {
  it('sends the pages with the strict CSP and no-cache, hashed assets compressed and cached for a year', async () => {
    const index = await fetch(`${api}/ui/messages`, { headers: { 'Accept-Encoding': 'br' } });
    expect(index.status).toBe(200);
    const csp = index.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    expect(html).not.toMatch(/<script>|<script(?![^>]*\bsrc=)|<style|\son\w+=/);
    const js = /src="(\/ui\/assets\/main-[A-Z0-9]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${api}${js}`, { headers: { 'Accept-Encoding': 'gzip, br' } });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-encoding')).toBe('br');
    expect(asset.headers.get('vary')).toBe('Accept-Encoding');
    const docs = await fetch(`${api}/docs`);
    expect(docs.headers.get('content-security-policy')).toBe(csp);
    expect((await fetch(`${api}/ui/assets/nothing-here.js`)).status).toBe(404);
  });

  it("keeps the app's JavaScript within 250 KB compressed (the built files)", () => {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'dist', 'ui', 'manifest.json'), 'utf8')) as {
      app: { js: string };
      files: Record<string, { gzip: number; brotli: number }>;
    };
    const app = manifest.files[manifest.app.js]!;
    const onDisk = readFileSync(join(REPO_ROOT, 'dist', 'ui', 'assets', `${manifest.app.js}.gz`)).length;
    expect(onDisk).toBe(app.gzip);
    expect(app.gzip).toBeLessThanOrEqual(JS_BUDGET_BYTES);
    expect(app.brotli).toBeLessThanOrEqual(JS_BUDGET_BYTES);
  });
});
