import { randomBytes } from 'node:crypto';
import {
  type BusEnvelope,
  Exchange,
  RoutingKey,
  SEND_EMAIL_COMMAND,
  type SendEmailMessage,
  commandsOf,
} from '@mailyard/contracts';
import { OutboxRelay, createLogger } from '@mailyard/platform';
import { MODES } from '@mailyard/testkit/modes';
import request from 'supertest';
import { addDomainMailer } from './support/mailers.fixture';
import { type Body, ULID, b64, useSendSuite } from './support/send-suite';

/** POST /v1/email/send, accepted sends: a valid send is stored durably (sends, log rows, outbox) in one transaction and published. Run on embedded defaults and on the real servers. */
for (const mode of MODES) {
  describe(`send API (${mode})`, () => {
    const { gw, m, base, send, q, counts } = useSendSuite(mode);

    describe('accepted sends', () => {
      it('answers 200 {success, ref_id, message: "queued"} and writes sends, QUEUED logs and one outbox row naming every copy', async () => {
        const body = {
          ...base(),
          to: [{ email: 'alice@dest.test', name: 'Alice' }, { email: 'bob@Bücher.example' }],
          cc: [{ email: 'carol@dest.test' }],
          bcc: [{ email: 'dave@archive.test', name: null }],
          replyTo: 'reply@example.com',
          headers: {
            'X-Tag': 'welcome',
            'Message-ID': 'order-42',
            'In-Reply-To': '<a@b.test>',
            References: '<a@b.test> <c@d.test>',
          },
          attachments: [
            { filename: 'a.txt', content: 'aGVs\r\nbG8=', type: 'text/plain' },
            {
              filename: 'logo.png',
              content: b64(randomBytes(30)),
              type: 'image/png',
              disposition: 'inline',
              content_id: 'logo@x',
            },
          ],
          settings: { open_tracking: { enable: true } },
          campaign_id: 'spring',
          custom_args: { order: 42, tags: ['a'] },
          unknown_field: 'dropped',
        };
        const res = await send(body);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ success: true, ref_id: expect.stringMatching(ULID), message: 'queued' });
        const refId: string = res.body.ref_id;

        const [s] = await q<{
          tenant_id: string;
          mailer_id: string;
          campaign_id: string;
          custom_args: unknown;
          request: Body;
          idempotency_key: null;
        }>(
          'SELECT tenant_id, mailer_id, campaign_id, custom_args, request, idempotency_key FROM sends WHERE ref_id = $1',
          [refId],
        );
        expect(s).toMatchObject({
          tenant_id: gw.tenantId,
          mailer_id: m.domain,
          campaign_id: 'spring',
          custom_args: { order: 42, tags: ['a'] },
        });
        expect(s!.idempotency_key).toBeNull();
        expect(s!.request).toEqual({
          from: { email: 'sender@example.com', name: 'Sender' },
          to: [{ email: 'alice@dest.test', name: 'Alice' }, { email: 'bob@xn--bcher-kva.example' }],
          cc: [{ email: 'carol@dest.test' }],
          bcc: [{ email: 'dave@archive.test' }],
          mailer_id: m.domain,
          subject: 'Hello',
          content: [{ type: 'text/plain', value: 'Hi there' }],
          replyTo: 'reply@example.com',
          headers: body.headers,
          attachments: [
            { filename: 'a.txt', content: 'aGVsbG8=', type: 'text/plain', disposition: 'attachment' },
            body.attachments[1],
          ],
          settings: { open_tracking: { enable: true }, click_tracking: { enable: false } },
          campaign_id: 'spring',
          custom_args: { order: 42, tags: ['a'] },
        });

        const logs = await q<Record<string, unknown>>(
          `SELECT copy_id, recipient, recipient_domain, recipient_type, status, subject, mailer_id, campaign_id, tenant_id
             FROM email_logs WHERE ref_id = $1 ORDER BY id`,
          [refId],
        );
        // Open tracking is on: every recipient gets a copy of its own (docs/tracking.md).
        const common = {
          status: 'QUEUED',
          subject: 'Hello',
          mailer_id: m.domain,
          campaign_id: 'spring',
          tenant_id: gw.tenantId,
        };
        expect(logs).toEqual([
          {
            ...common,
            copy_id: `${refId}.1`,
            recipient: 'alice@dest.test',
            recipient_domain: 'dest.test',
            recipient_type: 'to',
          },
          {
            ...common,
            copy_id: `${refId}.2`,
            recipient: 'bob@xn--bcher-kva.example',
            recipient_domain: 'xn--bcher-kva.example',
            recipient_type: 'to',
          },
          {
            ...common,
            copy_id: `${refId}.3`,
            recipient: 'carol@dest.test',
            recipient_domain: 'dest.test',
            recipient_type: 'cc',
          },
          {
            ...common,
            copy_id: `${refId}.4`,
            recipient: 'dave@archive.test',
            recipient_domain: 'archive.test',
            recipient_type: 'bcc',
          },
        ]);

        const outbox = await q<{
          exchange: string;
          routing_key: string;
          message: BusEnvelope<SendEmailMessage>;
        }>(
          `SELECT exchange, routing_key, message FROM outbox WHERE message->'payload'->'sends' @> jsonb_build_array(jsonb_build_object('ref_id', $1::text))`,
          [refId],
        );
        // Up to COPIES_PER_COMMAND (100) copies of a send share one command.
        expect(outbox).toHaveLength(1);
        expect(outbox[0]).toMatchObject({
          exchange: Exchange.commands,
          routing_key: RoutingKey.sendEmail,
          message: {
            type: SEND_EMAIL_COMMAND,
            version: 2,
            tenant_id: gw.tenantId,
            payload: {
              sends: [
                { ref_id: refId, tenant_id: gw.tenantId, copy_ids: [1, 2, 3, 4].map((n) => `${refId}.${n}`) },
              ],
              attempt: 1,
            },
          },
        });
      });

      it('makes one copy per to recipient with substitutions, each carrying every cc and bcc', async () => {
        const res = await send({
          ...base(),
          to: [{ email: 'a1@dest.test' }, { email: 'A2@Dest.test' }, { email: 'a3@dest.test' }],
          cc: [{ email: 'cc@dest.test' }],
          bcc: [{ email: 'bcc@dest.test' }],
          substitutions: {
            'a1@dest.test': { name: 'One', n: 1, vip: true, none: null },
            'a2@DEST.test': { name: 'Two' },
          },
        });
        expect(res.status).toBe(200);
        const refId: string = res.body.ref_id;
        const logs = await q<{ copy_id: string; recipient: string; recipient_type: string }>(
          'SELECT copy_id, recipient, recipient_type FROM email_logs WHERE ref_id = $1 ORDER BY id',
          [refId],
        );
        const copy = (n: number, to: string) => [
          { copy_id: `${refId}.${n}`, recipient: to, recipient_type: 'to' },
          { copy_id: `${refId}.${n}`, recipient: 'cc@dest.test', recipient_type: 'cc' },
          { copy_id: `${refId}.${n}`, recipient: 'bcc@dest.test', recipient_type: 'bcc' },
        ];
        expect(logs).toEqual([
          ...copy(1, 'a1@dest.test'),
          ...copy(2, 'A2@dest.test'),
          ...copy(3, 'a3@dest.test'),
        ]);
        const commands = await q<{ payload: SendEmailMessage }>(
          `SELECT message->'payload' AS payload FROM outbox WHERE message->'payload'->'sends' @> jsonb_build_array(jsonb_build_object('ref_id', $1::text)) ORDER BY id`,
          [refId],
        );
        expect(commands.flatMap((c) => c.payload.sends.flatMap((s) => s.copy_ids))).toEqual([
          `${refId}.1`,
          `${refId}.2`,
          `${refId}.3`,
        ]);
        const [row] = await q<{ request: { substitutions: unknown } }>(
          'SELECT request FROM sends WHERE ref_id = $1',
          [refId],
        );
        expect(row!.request.substitutions).toEqual({
          'a1@dest.test': { name: 'One', n: '1', vip: 'true', none: '' },
          'a2@dest.test': { name: 'Two' },
        });
      });

      it('still accepts sends to suppressed recipients (the send service suppresses them)', async () => {
        await gw.post('/v1/email/unsubscribe', { email: 'gone@dest.test' });
        const res = await send({ ...base(), to: [{ email: 'gone@dest.test' }] });
        expect(res.status).toBe(200);
        expect(await counts(res.body.ref_id)).toEqual({ sends: 1, logs: 1, outbox: 1 });
      });

      it('writes everything in one transaction: a failing outbox insert leaves no rows', async () => {
        await gw.ctx.db.query(`CREATE OR REPLACE FUNCTION test_fail_third_copy() RETURNS trigger AS $$
          BEGIN
            IF NEW.message->'payload'->>'sends' LIKE '%.3"%' THEN RAISE EXCEPTION 'test: outbox insert refused'; END IF;
            RETURN NEW;
          END $$ LANGUAGE plpgsql`);
        await gw.ctx.db.query(
          'CREATE TRIGGER test_fail_third_copy BEFORE INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION test_fail_third_copy()',
        );
        try {
          const tenant = await gw.newTenant();
          const mailer = await addDomainMailer(gw.ctx, tenant.tenantId, 'example.com');
          const to = [{ email: 'x1@dest.test' }, { email: 'x2@dest.test' }, { email: 'x3@dest.test' }];
          const res = await send(
            { ...base(), mailer_id: mailer, to, substitutions: { 'x1@dest.test': { a: 'b' } } },
            { key: tenant.apiKey },
          );
          expect(res.status).toBe(500);
          expect(res.body).toEqual({ success: false, error: 'Internal server error' });
          const rows = await q<{ s: number; l: number; o: number }>(
            `SELECT (SELECT count(*)::int FROM sends WHERE tenant_id = $1) AS s,
                    (SELECT count(*)::int FROM email_logs WHERE tenant_id = $1) AS l,
                    (SELECT count(*)::int FROM outbox WHERE message->>'tenant_id' = $1) AS o`,
            [tenant.tenantId],
          );
          expect(rows[0]).toEqual({ s: 0, l: 0, o: 0 });
        } finally {
          await gw.ctx.db.query('DROP TRIGGER test_fail_third_copy ON outbox');
          await gw.ctx.db.query('DROP FUNCTION test_fail_third_copy()');
        }
      });

      it('publishes the send.email command through the outbox relay to a queue bound to send.#', async () => {
        const relay = new OutboxRelay(gw.ctx.db, gw.ctx.bus, createLogger('relay-test', 'error'), {
          pollMs: 20,
          batchSize: 500,
        });
        const received: BusEnvelope<SendEmailMessage>[] = [];
        const consumer = await gw.ctx.bus.consume<SendEmailMessage>(
          {
            queue: `test.send-commands.${randomBytes(4).toString('hex')}`,
            bindings: [{ exchange: Exchange.commands, routingKey: 'send.#' }],
          },
          async (d) => {
            received.push(d.envelope);
          },
        );
        relay.start();
        try {
          const res = await send({
            ...base(),
            to: [{ email: 'p1@dest.test' }, { email: 'p2@dest.test' }],
            substitutions: { 'p1@dest.test': { v: '1' } },
          });
          expect(res.status).toBe(200);
          const refId: string = res.body.ref_id;
          const deadline = Date.now() + 15_000;
          // Distinct messages (by envelope id): delivery is at-least-once, a duplicate is allowed.
          const mine = () => [
            ...new Map(
              received.filter((e) => e.payload.sends.some((s) => s.ref_id === refId)).map((e) => [e.id, e]),
            ).values(),
          ];
          while (mine().length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
          expect(mine()).toHaveLength(1);
          expect(commandsOf(mine()[0]!.payload).flatMap((s) => s.copies)).toEqual([
            { ref_id: refId, tenant_id: gw.tenantId, copy_id: `${refId}.1`, attempt: 1 },
            { ref_id: refId, tenant_id: gw.tenantId, copy_id: `${refId}.2`, attempt: 1 },
          ]);
          for (const e of mine())
            expect(e).toMatchObject({ type: SEND_EMAIL_COMMAND, version: 2, tenant_id: gw.tenantId });
          // The relay settles rows (deletes them; with a retention, marks them sent) after the
          // broker confirmed them, which can be after the consumer already has them: wait for
          // that rather than read it once.
          const unsent = async () =>
            (
              await q<{ n: number }>(
                `SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NULL AND message->'payload'->'sends' @> jsonb_build_array(jsonb_build_object('ref_id', $1::text))`,
                [refId],
              )
            )[0]!.n;
          while ((await unsent()) > 0 && Date.now() < deadline + 15_000)
            await new Promise((r) => setTimeout(r, 25));
          expect(await unsent()).toBe(0);
        } finally {
          await relay.stop();
          await consumer.cancel();
        }
      });
    });
  });
}
