/**
 * The batched template read of GET /v1/email/template/{id} (template-reader.ts), on PGlite and on
 * PostgreSQL: concurrent reads of several tenants go out as one statement, and each still gets
 * only its own tenant's template (another tenant's id, or an unknown one, reads as absent), with
 * what was written before it.
 */
import { type Db, type Queryable, migrate, openDatabase } from '@mailyard/platform';
import { templates } from '@mailyard/store';
import { newTenant } from '@mailyard/testkit/fixtures';
import { MODES } from '@mailyard/testkit/modes';
import { type TestDatabase, createTestDatabase } from '@mailyard/testkit/servers';
import { templateReader } from '../src/templates/template-reader';

const content = (value: string) => [{ type: 'text/html' as const, value }];

for (const mode of MODES) {
  describe(`template reads batched per loop turn (${mode})`, () => {
    let db: Db;
    let testDb: TestDatabase | undefined;
    beforeAll(async () => {
      testDb = mode === 'servers' ? await createTestDatabase() : undefined;
      db = await openDatabase({ DATABASE_URL: testDb?.url, DATA_DIR: 'memory://', DB_POOL_SIZE: 2 });
      await migrate(db);
    });
    afterAll(async () => {
      await db?.close();
      await testDb?.drop();
    });

    it('answers concurrent reads of several tenants from one statement, each from its own tenant', async () => {
      const [a, b] = [await newTenant(db), await newTenant(db)];
      const a1 = await templates.create(db, a, { name: 'A1', subject: 'S a1', content: content('a1') });
      const a2 = await templates.create(db, a, { name: 'A2', subject: 'S a2', content: content('a2') });
      const b1 = await templates.create(db, b, { name: 'B1', subject: 'S b1', content: content('b1') });
      const statements: string[] = [];
      const counting: Queryable = {
        query: (sql, params) => {
          statements.push(sql);
          return db.query(sql, params);
        },
      };
      const read = templateReader(counting);
      const results = await Promise.all([
        read(a, a1),
        read(b, a1), // another tenant's template
        read(b, b1),
        read(a, a2),
        read(a, 'template_01JNOSUCHTEMPLATE0000000000'),
        read(a, a1), // the same read twice in one batch
      ]);
      expect(results).toEqual([
        { name: 'A1', subject: 'S a1', content: content('a1') },
        null,
        { name: 'B1', subject: 'S b1', content: content('b1') },
        { name: 'A2', subject: 'S a2', content: content('a2') },
        null,
        { name: 'A1', subject: 'S a1', content: content('a1') },
      ]);
      expect(statements).toHaveLength(1);
      // The statement itself never returns another tenant's row.
      expect(await templates.readMany(db, [{ tenantId: b, id: a1 }])).toEqual([]);

      // A read issued after an update returns the update; a later turn is a statement of its own.
      await templates.update(db, a, a1, { subject: 'Changed' });
      expect(await read(a, a1)).toMatchObject({ subject: 'Changed' });
      expect(statements).toHaveLength(2);
    });
  });
}
