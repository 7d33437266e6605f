import { type Server, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { type MailerDeactivatedEvent, MailerDeactivatedEventSchema, RoutingKey } from '@mailyard/contracts';
import type { OutboxRelay } from '@mailyard/platform';
import { deactivateMailer, loadMailerWebhook, loadSendingMailer, reactivateMailer } from '@mailyard/store';
import { MODES } from '@mailyard/testkit/modes';
import { type SmtpAuthServer, startSmtpAuthServer } from '@mailyard/testkit/peers/smtp-auth-server';
import type { Response } from 'supertest';
import { type CapturedEvents, captureEvents, outboxRows, startRelay } from './support/bus-events';
import { useGateway } from './support/harness';

const ULID = '[0-9A-HJKMNP-TV-Z]{26}';
const PASSWORD = 'Sm7p-pa55word-XYZ';

/** Mailer configuration API: CRUD, list, disable/enable, SMTP verify, automatic deactivation; both modes. */
for (const mode of MODES) {
  describe(`mailers API (${mode})`, () => {
    let relay: OutboxRelay;
    let events: CapturedEvents<MailerDeactivatedEvent>;
    let smtp: SmtpAuthServer;
    let silent: Server;
    let silentPort: number;

    // Far above what a loaded machine needs against the local peers; only `silent` reaches them.
    const timeouts = { SMTP_VERIFY_TIMEOUT_MS: '6000', IMAP_VERIFY_TIMEOUT_MS: '6000' };
    const gw = useGateway(mode, timeouts, async () => {
      await events?.stop();
      await relay?.stop();
    });
    beforeAll(async () => {
      relay = startRelay(gw.ctx);
      events = await captureEvents<MailerDeactivatedEvent>(gw.ctx, RoutingKey.mailerDeactivated);
      smtp = await startSmtpAuthServer({ user: 'sender@smtp.test', pass: PASSWORD });
      silent = createServer((s) => s.on('error', () => {}).resume());
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      silentPort = (silent.address() as AddressInfo).port;
    });
    afterAll(async () => {
      await smtp?.stop();
      if (silent) await new Promise((r) => silent.close(r));
    });

    const smtpBody = (config: object = {}, extra: object = {}) => ({
      name: 'Transactional',
      email: 'sender@smtp.test',
      config_type: 'smtp',
      connection_type: 'basic',
      config: {
        host: '127.0.0.1',
        port: smtp.port,
        username: 'sender@smtp.test',
        password: PASSWORD,
        secure: 'None',
        ...config,
      },
      ...extra,
    });
    const imapBody = (config: object = {}, extra: object = {}) => ({
      name: 'Support inbox',
      email: 'support@imap.test',
      config_type: 'imap',
      connection_type: 'basic',
      config: {
        host: '192.0.2.10',
        port: 993,
        username: 'support@imap.test',
        password: PASSWORD,
        secure: 'SSL',
        ...config,
      },
      ...extra,
    });
    const { post, put } = gw;
    const get = (id: string, k?: string) => gw.get(`/v1/mailer/${id}`, k);
    /** An it.each test: a valid `body()` with `patch` over it, created at `path`, answers 400 `message`. */
    const rejectsCreate = (path: string, body: () => object) => async (patch: object, message: string) => {
      const res = await post(path, { ...body(), ...patch });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, error: message });
    };
    /** A 201 with the new mailer's id (`prefix`_ULID) and `message`. */
    const expectCreated = (res: Response, prefix: string, message: string) => {
      expect(res.status).toBe(201);
      const mailerId = expect.stringMatching(new RegExp(`^${prefix}_${ULID}$`));
      expect(res.body).toEqual({ success: true, mailer_id: mailerId, message });
    };
    const createSmtp = async (config: object = {}) =>
      (await post('/v1/mailer/smtp', smtpBody(config))).body.mailer_id as string;

    it('creates an SMTP mailer and reads it back without the password', async () => {
      const res = await post('/v1/mailer/smtp', smtpBody());
      expectCreated(res, 'smtp', 'SMTP mailer created');
      const got = await get(res.body.mailer_id);
      expect(got.status).toBe(200);
      expect(got.body).toEqual({
        success: true,
        data: {
          mailer_id: res.body.mailer_id,
          name: 'Transactional',
          email: 'sender@smtp.test',
          config_type: 'smtp',
          connection_type: 'basic',
          state: 'active',
          state_reason: null,
          config: {
            host: '127.0.0.1',
            port: smtp.port,
            username: 'sender@smtp.test',
            secure: 'None',
            password_set: true,
          },
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
      });
      expect(JSON.stringify(got.body)).not.toContain(PASSWORD);
      // The send service gets the password unsealed.
      const sending = await loadSendingMailer(gw.ctx.db, gw.ctx.sealer, gw.tenantId, res.body.mailer_id);
      expect(sending).toMatchObject({
        kind: 'smtp',
        state: 'active',
        smtp: { host: '127.0.0.1', port: smtp.port, password: PASSWORD },
      });
    });

    it('defaults secure to Auto and the port by secure mode', async () => {
      const auto = await createSmtp({ port: undefined, secure: undefined });
      expect((await get(auto)).body.data.config).toMatchObject({ secure: 'Auto', port: 587 });
      const ssl = await createSmtp({ port: undefined, secure: 'SSL' });
      expect((await get(ssl)).body.data.config).toMatchObject({ secure: 'SSL', port: 465 });
    });

    it.each([
      [{ name: undefined }, 'name is required'],
      [{ email: 'not-an-address' }, 'email must be a valid email address'],
      [{ email: undefined }, 'email is required'],
      [{ config: undefined }, 'config is required'],
      [{ config: { port: 25, username: 'u', password: 'p' } }, 'config.host is required'],
      [
        { config: { host: 'h', port: 70000, username: 'u', password: 'p' } },
        'config.port must be an integer from 1 to 65535',
      ],
      [{ config: { host: 'h', username: 'u' } }, 'config.password is required'],
      [{ config: { host: 'h', password: 'p' } }, 'config.username is required'],
      [
        { config: { host: 'h', username: 'u', password: 'p', secure: 'STARTTLS' } },
        'config.secure must be one of Auto, Tls, SSL, None',
      ],
      [{ config_type: 'imap' }, 'config_type must be smtp for an SMTP configuration'],
      [
        { connection_type: 'oauth' },
        'connection_type must be basic; OAuth mailers are connected through POST /v1/oauth/login',
      ],
    ])('SMTP create rejects %j with 400 "%s"', rejectsCreate('/v1/mailer/smtp', smtpBody));

    it('creates an IMAP mailer (port 993 SSL only) with its incoming webhook; header values are sealed', async () => {
      const webhook = {
        url: 'https://hooks.example.com/imap',
        method: 'POST',
        headers: { 'X-Hook-Token': 'hook-secret-123' },
      };
      const res = await post('/v1/mailer/imap', imapBody({}, { webhook }));
      expectCreated(res, 'basic_imap', 'IMAP mailer created');
      const got = await get(res.body.mailer_id);
      expect(got.body.data).toMatchObject({
        config_type: 'imap',
        connection_type: 'basic',
        config: {
          host: '192.0.2.10',
          port: 993,
          username: 'support@imap.test',
          secure: 'SSL',
          password_set: true,
        },
        webhook: { url: 'https://hooks.example.com/imap', method: 'POST', headers_present: ['X-Hook-Token'] },
      });
      expect(JSON.stringify(got.body)).not.toContain('hook-secret-123');
      expect(await loadMailerWebhook(gw.ctx.db, gw.ctx.sealer, gw.tenantId, res.body.mailer_id)).toEqual({
        url: 'https://hooks.example.com/imap',
        method: 'POST',
        headers: { 'X-Hook-Token': 'hook-secret-123' },
      });
      const defaults = await post('/v1/mailer/imap', imapBody({ port: undefined, secure: undefined }));
      expect((await get(defaults.body.mailer_id)).body.data.config).toMatchObject({
        port: 993,
        secure: 'SSL',
      });
    });

    it.each([
      [
        { config: { host: 'h', port: 143, username: 'u', password: 'p' } },
        'Basic IMAP supports port 993 with SSL only',
      ],
      [
        { config: { host: 'h', port: 993, username: 'u', password: 'p', secure: 'Tls' } },
        'Basic IMAP supports port 993 with SSL only',
      ],
      [
        { config: { host: 'h', username: 'u', password: 'p', secure: 'None' } },
        'Basic IMAP supports port 993 with SSL only',
      ],
      [{ config_type: 'smtp' }, 'config_type must be imap for an IMAP configuration'],
      [{ webhook: { url: 'http://hooks.example.com/x' } }, 'webhook.url must be an https URL'],
      [{ webhook: { url: 'not a url' } }, 'webhook.url must be an https URL'],
      [
        { webhook: { url: 'https://h.example/x', headers: { 'X-A': 'a\r\nInjected: 1' } } },
        'webhook.headers.X-A must be a string of printable ASCII characters without control characters (at most 8192)',
      ],
    ])('IMAP create rejects %j with 400 "%s"', rejectsCreate('/v1/mailer/imap', imapBody));

    it('updates only what is given; an omitted password is kept', async () => {
      const id = await createSmtp();
      const renamed = await put('/v1/mailer/smtp', { mailer_id: id, name: 'Renamed' });
      expect(renamed.body).toEqual({ success: true, mailer_id: id, message: 'Mailer updated' });
      expect((await get(id)).body.data).toMatchObject({ name: 'Renamed', email: 'sender@smtp.test' });

      await put('/v1/mailer/smtp', {
        mailer_id: id,
        email: 'other@smtp.test',
        config: { host: '127.0.0.1', secure: 'None' },
      });
      let data = (await get(id)).body.data;
      expect(data).toMatchObject({ name: 'Renamed', email: 'other@smtp.test' });
      let sending = await loadSendingMailer(gw.ctx.db, gw.ctx.sealer, gw.tenantId, id);
      expect(sending?.kind === 'smtp' && sending.smtp.password).toBe(PASSWORD);

      // A new destination needs the password again (400 without it; see mailers-host-policy.test.ts).
      const moved = { host: '192.0.2.20', port: 2525 };
      expect((await put('/v1/mailer/smtp', { mailer_id: id, config: moved })).status).toBe(400);
      await put('/v1/mailer/smtp', { mailer_id: id, config: { ...moved, password: PASSWORD } });
      data = (await get(id)).body.data;
      expect(data.config).toEqual({
        host: '192.0.2.20',
        port: 2525,
        username: 'sender@smtp.test',
        secure: 'None',
        password_set: true,
      });
      sending = await loadSendingMailer(gw.ctx.db, gw.ctx.sealer, gw.tenantId, id);
      expect(sending?.kind === 'smtp' && sending.smtp.password).toBe(PASSWORD);

      await put('/v1/mailer/smtp', { mailer_id: id, config: { password: 'new-password-42' } });
      sending = await loadSendingMailer(gw.ctx.db, gw.ctx.sealer, gw.tenantId, id);
      expect(sending?.kind === 'smtp' && sending.smtp.password).toBe('new-password-42');
    });

    it('updates an IMAP mailer and replaces or removes its webhook', async () => {
      const id = (await post('/v1/mailer/imap', imapBody())).body.mailer_id;
      expect((await get(id)).body.data.webhook).toBeNull();
      await put('/v1/mailer/imap', {
        mailer_id: id,
        webhook: { url: 'https://h.example.com/new', headers: { Authorization: 'Bearer t' } },
      });
      expect((await get(id)).body.data.webhook).toEqual({
        url: 'https://h.example.com/new',
        method: 'POST',
        headers_present: ['Authorization'],
      });
      await put('/v1/mailer/imap', { mailer_id: id, webhook: null });
      expect((await get(id)).body.data.webhook).toBeNull();
      expect(await loadMailerWebhook(gw.ctx.db, gw.ctx.sealer, gw.tenantId, id)).toBeNull();
      const badPort = await put('/v1/mailer/imap', { mailer_id: id, config: { port: 143 } });
      expect(badPort.status).toBe(400);
    });

    it('update errors: 400 without mailer_id, 404 unknown, 422 for the wrong kind', async () => {
      expect((await gw.get('/v1/mailer')).body).toEqual({
        success: false,
        error: 'mailer_id is required',
      });
      expect((await put('/v1/mailer/smtp', { name: 'x' })).body).toMatchObject({
        success: false,
        error: 'mailer_id is required',
      });
      const unknown = await put('/v1/mailer/smtp', {
        mailer_id: 'smtp_01HZZZZZZZZZZZZZZZZZZZZZZZ',
        name: 'x',
      });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ success: false, error: 'Mailer not found' });
      const imapId = (await post('/v1/mailer/imap', imapBody())).body.mailer_id;
      const wrongKind = await put('/v1/mailer/smtp', { mailer_id: imapId, name: 'x' });
      expect(wrongKind.status).toBe(422);
      expect(wrongKind.body).toEqual({ success: false, error: 'Mailer is not a basic SMTP configuration' });
      const smtpId = await createSmtp();
      expect((await put('/v1/mailer/imap', { mailer_id: smtpId, name: 'x' })).status).toBe(422);
      const domain = await post('/v1/domain/add', { domain: 'mailers-suite.example.com' });
      const domainUpdate = await put('/v1/mailer/smtp', { mailer_id: domain.body.data.mailer_id, name: 'x' });
      expect(domainUpdate.status).toBe(422);
      expect(domainUpdate.body.error).toBe('A domain mailer is managed through the /v1/domain endpoints');
    });

    it('lists mailers with a cursor, nextPageToken and totalCount', async () => {
      const t = await gw.newTenant();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++)
        ids.push((await post('/v1/mailer/smtp', smtpBody(), t.apiKey)).body.mailer_id);
      ids.push((await post('/v1/mailer/imap', imapBody(), t.apiKey)).body.mailer_id);
      const first = await gw.get('/v1/mailers?pageSize=3', t.apiKey);
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ success: true, totalCount: 4, nextPageToken: expect.any(String) });
      const rest = await gw.get(`/v1/mailers?pageSize=3&pageToken=${first.body.nextPageToken}`, t.apiKey);
      expect(rest.body).toMatchObject({ totalCount: 4, nextPageToken: null });
      const all = [...first.body.data, ...rest.body.data];
      expect(all.map((m: { mailer_id: string }) => m.mailer_id).sort()).toEqual([...ids].sort());
      expect(JSON.stringify(all)).not.toContain(PASSWORD);
      expect((await gw.get('/v1/mailers?pageToken=nope', t.apiKey)).status).toBe(400);
    });

    it('deletes: 404 afterwards, the send service reads it as deleted, the secret is wiped', async () => {
      const id = await createSmtp();
      const del = await gw.delete(`/v1/mailer/${id}`);
      expect(del.body).toEqual({ success: true, message: 'Mailer deleted' });
      expect((await get(id)).status).toBe(404);
      expect((await gw.delete(`/v1/mailer/${id}`)).status).toBe(404);
      const sending = await loadSendingMailer(gw.ctx.db, gw.ctx.sealer, gw.tenantId, id);
      expect(sending).toMatchObject({ state: 'deleted', smtp: { password: '' } });
    });

    it('disables and enables by hand, without any event', async () => {
      const id = await createSmtp();
      const disabled = await post(`/v1/mailer/${id}/disable`, {});
      expect(disabled.body).toEqual({
        success: true,
        mailer_id: id,
        state: 'disabled',
        message: 'Mailer disabled',
      });
      expect((await get(id)).body.data.state).toBe('disabled');
      expect((await loadSendingMailer(gw.ctx.db, gw.ctx.sealer, gw.tenantId, id))?.state).toBe('disabled');
      expect((await post(`/v1/mailer/${id}/disable`, {})).body.message).toBe('Mailer was already disabled');
      const enabled = await post(`/v1/mailer/${id}/enable`, {});
      expect(enabled.body).toEqual({
        success: true,
        mailer_id: id,
        state: 'active',
        message: 'Mailer enabled',
      });
      expect((await post(`/v1/mailer/${id}/enable`, {})).body.message).toBe('Mailer was already active');
      const rows = await outboxRows(gw.ctx, RoutingKey.mailerDeactivated);
      expect(rows.filter((r) => JSON.stringify(r.message).includes(id))).toHaveLength(0);
    });

    it('automatic deactivation flips the state and emits MAILER_DEACTIVATED; manual disable does not', async () => {
      const id = await createSmtp();
      expect(
        await deactivateMailer(
          gw.ctx.db,
          gw.tenantId,
          id,
          'provider_auth_error',
          '535 5.7.8 Authentication credentials invalid',
        ),
      ).toBe('changed');
      const event = await events.waitFor((e) => e.payload.details.mailer_id === id);
      expect(event).toMatchObject({ type: 'mailer.deactivated', version: 1, tenant_id: gw.tenantId });
      expect(event.payload).toEqual({
        event: 'MAILER_DEACTIVATED',
        success: false,
        details: {
          mailer_id: id,
          config_type: 'smtp',
          failed_reason: 'provider_auth_error',
          provider_error: '535 5.7.8 Authentication credentials invalid',
        },
      });
      expect(MailerDeactivatedEventSchema.safeParse(event.payload).success).toBe(true);
      expect((await get(id)).body.data).toMatchObject({
        state: 'deactivated',
        state_reason: 'provider_auth_error',
      });
      expect((await loadSendingMailer(gw.ctx.db, gw.ctx.sealer, gw.tenantId, id))?.state).toBe('deactivated');

      // Already deactivated: no second event. Manual disable of a deactivated mailer is refused.
      expect(await deactivateMailer(gw.ctx.db, gw.tenantId, id, 'provider_auth_error')).toBe('unchanged');
      expect((await post(`/v1/mailer/${id}/disable`, {})).status).toBe(409);
      const rows = (await outboxRows(gw.ctx, RoutingKey.mailerDeactivated)).filter((r) =>
        JSON.stringify(r.message).includes(id),
      );
      expect(rows).toHaveLength(1);

      // Re-activation after successful re-authentication emits nothing.
      expect(await reactivateMailer(gw.ctx.db, gw.tenantId, id)).toBe('changed');
      expect((await get(id)).body.data).toMatchObject({ state: 'active', state_reason: null });
      expect(await reactivateMailer(gw.ctx.db, gw.tenantId, id)).toBe('unchanged');

      // A disabled mailer is not deactivated automatically; an IMAP one reports its config type; no provider_error when empty.
      const imapId = (await post('/v1/mailer/imap', imapBody())).body.mailer_id;
      expect(await deactivateMailer(gw.ctx.db, gw.tenantId, imapId, 'oauth_revoked')).toBe('changed');
      const imapEvent = await events.waitFor((e) => e.payload.details.mailer_id === imapId);
      expect(imapEvent.payload.details).toEqual({
        mailer_id: imapId,
        config_type: 'imap',
        failed_reason: 'oauth_revoked',
      });
      const disabledId = await createSmtp();
      await post(`/v1/mailer/${disabledId}/disable`, {});
      expect(await deactivateMailer(gw.ctx.db, gw.tenantId, disabledId, 'provider_auth_error')).toBe(
        'unchanged',
      );
      expect(await deactivateMailer(gw.ctx.db, 'tenant_other', id, 'provider_auth_error')).toBe('not_found');
      // What is published is what the outbox holds (the relay keeps sent rows here): counted there,
      // not on the bus after a fixed sleep (at-least-once: the bus may deliver a message twice).
      const written = async (mailerId: string) =>
        (await outboxRows(gw.ctx, RoutingKey.mailerDeactivated)).filter(
          (r) => (r.message.payload as MailerDeactivatedEvent).details.mailer_id === mailerId,
        );
      expect(await written(id)).toHaveLength(1);
      expect(await written(disabledId)).toHaveLength(0);
    });

    it('enable re-authenticates a deactivated mailer with its stored credentials', async () => {
      const good = await createSmtp();
      await deactivateMailer(gw.ctx.db, gw.tenantId, good, 'provider_auth_error', '535');
      const ok = await post(`/v1/mailer/${good}/enable`, {});
      expect(ok.body).toMatchObject({ success: true, state: 'active' });

      const bad = await createSmtp({ password: 'stale-password-1' });
      await deactivateMailer(gw.ctx.db, gw.tenantId, bad, 'provider_auth_error', '535');
      const refused = await post(`/v1/mailer/${bad}/enable`, {});
      expect(refused.status).toBe(422);
      expect(refused.body).toEqual({
        success: false,
        error: 'SMTP authentication failed',
        details: '535 Invalid username or password',
      });
      expect((await get(bad)).body.data.state).toBe('deactivated');
      // New, right credentials re-activate it (verified before saving).
      const wrongAgain = await put('/v1/mailer/smtp', {
        mailer_id: bad,
        config: { password: 'still-wrong-2' },
      });
      expect(wrongAgain.status).toBe(422);
      const fixed = await put('/v1/mailer/smtp', { mailer_id: bad, config: { password: PASSWORD } });
      expect(fixed.status).toBe(200);
      expect((await get(bad)).body.data.state).toBe('active');
    });

    it('smtpbasic/verify authenticates before saving (right password)', async () => {
      const before = smtp.attempts.length;
      const res = await post('/v1/smtpbasic/verify', smtpBody());
      expectCreated(res, 'basic_smtp', 'SMTP credentials verified; mailer created');
      expect(smtp.attempts.slice(before)).toEqual([
        { username: 'sender@smtp.test', ok: true, method: 'PLAIN' },
      ]);
      expect((await get(res.body.mailer_id)).body.data).toMatchObject({
        config_type: 'basic_smtp',
        connection_type: 'basic',
        state: 'active',
      });
    });

    it('smtpbasic/verify: a wrong password is 422 with the server reason and saves nothing', async () => {
      const count = async () => (await gw.get('/v1/mailers?pageSize=1')).body.totalCount as number;
      const before = await count();
      const res = await post('/v1/smtpbasic/verify', smtpBody({ password: 'wrong-Pa55' }));
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        success: false,
        error: 'SMTP authentication failed',
        details: '535 Invalid username or password',
      });
      expect(JSON.stringify(res.body)).not.toContain('wrong-Pa55');
      expect(await count()).toBe(before);
    });

    it('smtpbasic/verify: a dead port answers 422 with a clear message (bounded timeouts)', async () => {
      const refused = await post('/v1/smtpbasic/verify', smtpBody({ port: 1 }));
      expect(refused.status).toBe(422);
      expect(refused.body).toEqual({
        success: false,
        error: 'Could not connect to the SMTP server',
        details: 'Could not connect to 127.0.0.1:1 (ECONNREFUSED)',
      });
      const mute = await post('/v1/smtpbasic/verify', smtpBody({ port: silentPort }));
      expect(mute.status).toBe(422);
      expect(mute.body).toEqual({
        success: false,
        error: 'The SMTP server did not answer in time',
        details: `127.0.0.1:${silentPort} did not answer within 6000 ms (CONN)`,
      });
      // Tls required, but the server offers no STARTTLS.
      const tls = await post('/v1/smtpbasic/verify', smtpBody({ secure: 'Tls' }));
      expect(tls.status).toBe(422);
      expect(tls.body.error).toBe('TLS with the SMTP server failed');
    });

    it("reads another tenant's mailer as 404 everywhere", async () => {
      const id = await createSmtp();
      expect((await get(id, gw.otherKey)).status).toBe(404);
      expect((await put('/v1/mailer/smtp', { mailer_id: id, name: 'x' }, gw.otherKey)).status).toBe(404);
      expect((await post(`/v1/mailer/${id}/disable`, {}, gw.otherKey)).status).toBe(404);
      expect((await post(`/v1/mailer/${id}/enable`, {}, gw.otherKey)).status).toBe(404);
      expect((await gw.delete(`/v1/mailer/${id}`, gw.otherKey)).status).toBe(404);
      const list = await gw.get('/v1/mailers?pageSize=50', gw.otherKey);
      expect(list.body.data.map((m: { mailer_id: string }) => m.mailer_id)).not.toContain(id);
      expect(await loadSendingMailer(gw.ctx.db, gw.ctx.sealer, 'tenant_someone_else', id)).toBeNull();
      expect((await get(id)).body.data.name).toBe('Transactional');
    });
  });
}
