/**
 * Migration 0032 on a database that already has suppressions (as an installation upgrading
 * would): the old reason `unsubscribed` becomes `unsubscribe`, a value outside the four becomes
 * `manual`, the others stay; `ref_id` is null for them; the default and the CHECK follow the
 * API's reasons. On PostgreSQL and on the embedded database.
 */
import { migrate, openDatabase, readMigrations } from '@mailyard/platform';
import { type TestDatabase, createTestDatabase } from '@mailyard/testkit/servers';

const V = '0032_suppression_reasons';

describe.each(['servers', 'embedded'] as const)('migration 0032 (%s)', (mode) => {
  let pg: TestDatabase | undefined;
  afterAll(async () => {
    await pg?.drop();
  });

  it('rewrites existing reasons, adds ref_id, the default and the CHECK', async () => {
    if (mode === 'servers') pg = await createTestDatabase();
    const db = await openDatabase(
      pg
        ? { DATABASE_URL: pg.url, DATA_DIR: '', DB_POOL_SIZE: 2 }
        : { DATABASE_URL: undefined, DATA_DIR: 'memory://', DB_POOL_SIZE: 1 },
    );
    try {
      const all = readMigrations();
      expect(all.map((m) => m.version)).toContain(V);
      await migrate(
        db,
        all.filter((m) => m.version < V),
      );
      await db.query("INSERT INTO tenants (id, name, tier) VALUES ('t_old', 'old', 'standard')");
      await db.query(
        `INSERT INTO suppressions (tenant_id, email, reason) VALUES
           ('t_old', 'left@example.org', 'unsubscribed'), ('t_old', 'gone@example.org', 'hard_bounce'),
           ('t_old', 'spam@example.org', 'spam_complaint'), ('t_old', 'odd@example.org', 'imported')`,
      );
      await db.query("INSERT INTO suppressions (tenant_id, email) VALUES ('t_old', 'default@example.org')");

      await migrate(db, all);
      const { rows } = await db.query<{ email: string; reason: string; ref_id: string | null }>(
        "SELECT email, reason, ref_id FROM suppressions WHERE tenant_id = 't_old' ORDER BY email",
      );
      expect(rows).toEqual([
        { email: 'default@example.org', reason: 'unsubscribe', ref_id: null },
        { email: 'gone@example.org', reason: 'hard_bounce', ref_id: null },
        { email: 'left@example.org', reason: 'unsubscribe', ref_id: null },
        { email: 'odd@example.org', reason: 'manual', ref_id: null },
        { email: 'spam@example.org', reason: 'spam_complaint', ref_id: null },
      ]);
      await db.query("INSERT INTO suppressions (tenant_id, email) VALUES ('t_old', 'new@example.org')");
      expect(
        (
          await db.query<{ reason: string }>(
            "SELECT reason FROM suppressions WHERE email = 'new@example.org'",
          )
        ).rows[0]?.reason,
      ).toBe('unsubscribe');
      await expect(
        db.query(
          "INSERT INTO suppressions (tenant_id, email, reason) VALUES ('t_old', 'x@example.org', 'unsubscribed')",
        ),
      ).rejects.toThrow(/suppressions_reason_check/);
    } finally {
      await db.close();
    }
  });
});
