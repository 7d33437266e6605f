import { domainOf, planCopies, ulid } from '@mailyard/contracts';
import type { Db, Queryable } from '@mailyard/platform';
import { type GroupedSend, SEND_GROUP_MAX_ROWS as MAX_ROWS, SendGroupCommit } from '@mailyard/store';
import { MODES } from '@mailyard/testkit/modes';
import { type Body, ULID, useSendSuite } from './support/send-suite';

/**
 * Group commit of sends (libs/store/src/send-accept/group-commit.ts): concurrent sends share one read and one
 * insert statement, each is answered only once its rows are committed, with its own ref_id, and
 * a send whose own rows cannot be written fails alone. Run on embedded defaults and on the real
 * servers.
 */
for (const mode of MODES) {
  describe(`send group commit (${mode})`, () => {
    const { gw, m, base, send, q, counts } = useSendSuite(mode);

    /** The real database, counting the statements sent through it. */
    const counting = (db: Db) => {
      const seen: string[] = [];
      const wrapped: Db = {
        ...db,
        query: ((sql: string, params?: readonly unknown[]) => {
          seen.push(sql);
          return db.query(sql, params);
        }) as Queryable['query'],
      };
      return { db: wrapped, seen };
    };

    /** The rows acceptSend writes for a send of `tenantId` to `email` (and `extra` more recipients). */
    const rowsFor = (tenantId: string, email: string, extra = 0): GroupedSend => {
      const refId = ulid();
      const to = [{ email }, ...Array.from({ length: extra }, (_, i) => ({ email: `x${i}.${email}` }))];
      const request = { ...(base() as object), to } as never;
      const copies = planCopies(request, refId);
      return {
        send: {
          refId,
          tenantId,
          mailerId: m.domain!,
          campaignId: null,
          customArgs: { email },
          request: { ...(request as object), subject: 'Hello', content: [] } as never,
        },
        recipients: copies.flatMap((c) =>
          c.recipients.map((r) => ({
            copyId: c.copy_id,
            recipient: r.email,
            recipientDomain: domainOf(r.email),
            recipientType: r.type,
          })),
        ),
        copies: { tenantId, refId, copyIds: copies.map((c) => c.copy_id), traceparent: undefined },
      };
    };

    it('answers concurrent sends each with its own ref_id, every one committed when answered', async () => {
      const emails = Array.from({ length: 25 }, (_, i) => `gc${i}@dest.test`);
      const answers = await Promise.all(
        emails.map(async (email) => {
          const res = await send({ ...base(), to: [{ email }], custom_args: { email } });
          // Read as soon as the answer arrives: the send must already be committed.
          const rows = await q<{ to: Body[]; custom_args: { email: string } }>(
            `SELECT request->'to' AS to, custom_args FROM sends WHERE ref_id = $1`,
            [res.body.ref_id],
          );
          return { email, res, rows };
        }),
      );
      for (const { email, res, rows } of answers) {
        expect(res.status).toBe(200);
        expect(res.body.ref_id).toMatch(ULID);
        expect(rows).toEqual([{ to: [{ email }], custom_args: { email } }]);
        expect(await counts(res.body.ref_id)).toEqual({ sends: 1, logs: 1, outbox: 1 });
      }
      expect(new Set(answers.map((a) => a.res.body.ref_id)).size).toBe(emails.length);
    });

    it('answers each concurrent send by its own mailer and template, whatever the others are', async () => {
      const [ok, unknownMailer, unknownTemplate, disabled] = await Promise.all([
        send({ ...base(), to: [{ email: 'fine@dest.test' }] }),
        send({ ...base(), mailer_id: 'mlr_doesnotexist' }),
        send({ ...base(), subject: undefined, content: undefined, template_id: 'tpl_doesnotexist' }),
        send({ ...base(), mailer_id: m.disabled }),
      ]);
      // The same requests one at a time get the same answers.
      const alone = [
        await send({ ...base(), mailer_id: 'mlr_doesnotexist' }),
        await send({ ...base(), subject: undefined, content: undefined, template_id: 'tpl_doesnotexist' }),
        await send({ ...base(), mailer_id: m.disabled }),
      ];
      expect(ok!.status).toBe(200);
      expect([unknownMailer!.status, unknownTemplate!.status, disabled!.status]).toEqual(
        alone.map((r) => r.status),
      );
      expect([unknownMailer!.body, unknownTemplate!.body, disabled!.body]).toEqual(alone.map((r) => r.body));
      expect(alone.every((r) => r.status >= 400)).toBe(true);
    });

    it('writes the sends submitted together in one statement, their commands in one outbox row', async () => {
      const { db, seen } = counting(gw.ctx.db);
      const group = new SendGroupCommit(db);
      const batch = Array.from({ length: 10 }, (_, i) => rowsFor(gw.tenantId, `one${i}@dest.test`));
      await Promise.all(batch.map((rows) => group.write(rows)));
      expect(seen).toHaveLength(1);
      for (const rows of batch)
        expect(await counts(rows.send.refId)).toEqual({ sends: 1, logs: 1, outbox: 1 });
      // One send.email version-2 message naming the ten sends, in order.
      const shared = await q<{ version: number; refs: string[] }>(
        `SELECT (message->>'version')::int AS version,
                ARRAY(SELECT s->>'ref_id' FROM jsonb_array_elements(message->'payload'->'sends') s) AS refs
           FROM outbox WHERE message->'payload'->'sends' @> jsonb_build_array(jsonb_build_object('ref_id', $1::text))`,
        [batch[0]!.send.refId],
      );
      expect(shared).toEqual([{ version: 2, refs: batch.map((b) => b.send.refId) }]);
    });

    it('splits sends that together exceed MAX_ROWS rows into separate statements', async () => {
      const { db, seen } = counting(gw.ctx.db);
      const group = new SendGroupCommit(db);
      const big = Math.ceil(MAX_ROWS / 2);
      const batch = [
        rowsFor(gw.tenantId, 'big1@dest.test', big),
        rowsFor(gw.tenantId, 'big2@dest.test', big),
      ];
      await Promise.all(batch.map((rows) => group.write(rows)));
      expect(seen).toHaveLength(2);
      for (const rows of batch)
        expect(await counts(rows.send.refId)).toEqual({ sends: 1, logs: big + 1, outbox: 1 });
    });

    it('fails only the send whose own rows cannot be written; the others are committed', async () => {
      const { db, seen } = counting(gw.ctx.db);
      const group = new SendGroupCommit(db);
      const good = [rowsFor(gw.tenantId, 'a@dest.test'), rowsFor(gw.tenantId, 'b@dest.test')];
      // A tenant that does not exist: its sends row breaks the foreign key, and with it the statement.
      const bad = rowsFor('ten_doesnotexist', 'c@dest.test');
      const results = await Promise.allSettled([
        group.write(good[0]!),
        group.write(bad),
        group.write(good[1]!),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/foreign key|violates/i);
      // One statement for the three, then one per send.
      expect(seen).toHaveLength(4);
      for (const rows of good)
        expect(await counts(rows.send.refId)).toEqual({ sends: 1, logs: 1, outbox: 1 });
      expect(await counts(bad.send.refId)).toEqual({ sends: 0, logs: 0, outbox: 0 });
    });
  });
}
