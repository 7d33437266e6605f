import { randomBytes } from 'node:crypto';
import { MODES } from '@mailyard/testkit/modes';
import request from 'supertest';
import { addDomainMailer } from './support/mailers.fixture';
import { useSendSuite } from './support/send-suite';

/** POST /v1/email/send, Idempotency-Key: a retry with the same key answers the first result and writes nothing twice. Run on embedded defaults and on the real servers. */
for (const mode of MODES) {
  describe(`send API (${mode})`, () => {
    const { gw, m, base, send, q, counts } = useSendSuite(mode);

    describe('Idempotency-Key', () => {
      it('returns the first ref_id for a retry and writes nothing twice', async () => {
        const idem = `order-${randomBytes(6).toString('hex')}`;
        const first = await send(base(), { idem });
        expect(first.status).toBe(200);
        expect(first.headers['idempotent-replayed']).toBeUndefined();
        const again = await send(
          { ...base(), from: { name: 'Sender', email: 'sender@EXAMPLE.com' } },
          { idem },
        );
        expect(again.status).toBe(200);
        expect(again.body).toEqual(first.body);
        expect(again.headers['idempotent-replayed']).toBe('true');
        expect(await counts(first.body.ref_id)).toEqual({ sends: 1, logs: 1, outbox: 1 });
        const [n] = await q<{ n: number }>(
          'SELECT count(*)::int AS n FROM sends WHERE tenant_id = $1 AND idempotency_key = $2',
          [gw.tenantId, idem],
        );
        expect(n!.n).toBe(1);
      });

      it('answers a retry even after the mailer was disabled (the first result stands)', async () => {
        const mailer = await addDomainMailer(gw.ctx, gw.tenantId, 'retry.test');
        const idem = `k-${randomBytes(6).toString('hex')}`;
        const body = { ...base(), from: { email: 'a@retry.test' }, mailer_id: mailer };
        const first = await send(body, { idem });
        expect(first.status).toBe(200);
        await gw.ctx.db.query("UPDATE mailers SET state = 'disabled' WHERE id = $1", [mailer]);
        const again = await send(body, { idem });
        expect(again.status).toBe(200);
        expect(again.body.ref_id).toBe(first.body.ref_id);
        expect((await send(body)).status).toBe(422);
      });

      it('refuses the same key with a different request (422)', async () => {
        const idem = `k-${randomBytes(6).toString('hex')}`;
        const first = await send(base(), { idem });
        const res = await send({ ...base(), subject: 'Different' }, { idem });
        expect(res.status).toBe(422);
        expect(res.body).toEqual({
          success: false,
          error: 'Idempotency-Key was already used with a different request',
        });
        expect(await counts(first.body.ref_id)).toEqual({ sends: 1, logs: 1, outbox: 1 });
      });

      it('keeps keys per tenant', async () => {
        const idem = `shared-${randomBytes(6).toString('hex')}`;
        const mine = await send(base(), { idem });
        const theirs = await send({ ...base(), mailer_id: m.other }, { idem, key: gw.otherKey });
        expect(theirs.status).toBe(200);
        expect(theirs.body.ref_id).not.toBe(mine.body.ref_id);
      });

      it('treats a key older than 24 h as new and moves it to the new send', async () => {
        const idem = `old-${randomBytes(6).toString('hex')}`;
        const first = await send(base(), { idem });
        await gw.ctx.db.query(
          "UPDATE sends SET created_at = now() - interval '24 hours 1 minute' WHERE ref_id = $1",
          [first.body.ref_id],
        );
        const second = await send({ ...base(), subject: 'even a different body' }, { idem });
        expect(second.status).toBe(200);
        expect(second.body.ref_id).not.toBe(first.body.ref_id);
        const rows = await q<{ ref_id: string; idempotency_key: string | null }>(
          'SELECT ref_id, idempotency_key FROM sends WHERE ref_id = ANY($1::text[]) ORDER BY ref_id',
          [[first.body.ref_id, second.body.ref_id]],
        );
        expect(rows).toEqual([
          { ref_id: first.body.ref_id, idempotency_key: null },
          { ref_id: second.body.ref_id, idempotency_key: idem },
        ]);
        expect((await send({ ...base(), subject: 'even a different body' }, { idem })).body.ref_id).toBe(
          second.body.ref_id,
        );
      });

      it('lets concurrent duplicates insert once', async () => {
        const idem = `race-${randomBytes(6).toString('hex')}`;
        const body = {
          ...base(),
          to: [{ email: 'r1@dest.test' }, { email: 'r2@dest.test' }],
          substitutions: { 'r1@dest.test': { x: '1' } },
        };
        const results = await Promise.all(Array.from({ length: 12 }, () => send(body, { idem })));
        expect(results.map((r) => r.status)).toEqual(Array(12).fill(200));
        const refIds = new Set(results.map((r) => r.body.ref_id));
        expect(refIds.size).toBe(1);
        const [refId] = [...refIds] as string[];
        // Two copies (one with substitutions), one send.email command naming both (COPIES_PER_COMMAND).
        expect(await counts(refId!)).toEqual({ sends: 1, logs: 2, outbox: 1 });
        expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(11);
      });

      it('gives different keys different sends', async () => {
        const a = await send(base(), { idem: `a-${randomBytes(6).toString('hex')}` });
        const b = await send(base(), { idem: `b-${randomBytes(6).toString('hex')}` });
        expect(a.body.ref_id).not.toBe(b.body.ref_id);
      });

      it.each([
        ['too long', 'k'.repeat(256)],
        ['empty', ''],
        ['non-ASCII', 'clé'],
      ])('rejects a key that is %s', async (_name, idem) => {
        const res = await gw.post('/v1/email/send').set('Idempotency-Key', idem).send(base());
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          success: false,
          error: 'Idempotency-Key must be 1 to 255 printable ASCII characters',
        });
      });

      it('accepts a 255-character key', async () => {
        expect(
          (await send(base(), { idem: `${randomBytes(4).toString('hex')}${'k'.repeat(247)}` })).status,
        ).toBe(200);
      });
    });
  });
}
