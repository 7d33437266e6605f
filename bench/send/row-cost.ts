/**
 * PostgreSQL's own cost per email of the send path's writes, per schema, exactly: no services,
 * no broker, no other database traffic. A private PostgreSQL (libs/testkit private-servers, its
 * WAL is ours alone) gets one database per schema, each migrated with the migrations of one
 * checkout (`BENCH_SERVICES_ROOT`, required: the installed checkout to compare against this one), and one
 * backend (pool of 1) runs this checkout's libs/store writers as the services run them:
 *
 * - accept: the gateway's group commit (sends.insertAcceptedBatch), `BENCH_ROWS_GROUP` sends of
 *   one recipient each per statement, each with its `send.email` outbox row;
 * - deliver: the send service's event writer (recordEmailEventBatch), MAIL_DELIVERED for
 *   `BENCH_ROWS_GROUP` recipients per transaction (row locks, event rows, the log status
 *   update, the event outbox rows);
 * - relay: the outbox relay's DELETE ... RETURNING of 100 rows per statement.
 *
 * Per phase: WAL bytes per email (pg_current_wal_insert_lsn), the backend's CPU-ms per email
 * (/proc/<pid>/stat of that backend), and the tables' inserted/updated/HOT counts. The schemas
 * alternate phase by phase (`BENCH_ROWS_ROUNDS` rounds) so machine load hits both alike.
 *
 *   BENCH_ROWS_EMAILS=4000 BENCH_ROWS_GROUP=20 BENCH_SERVICES_ROOT=../other-checkout pnpm exec tsx bench/send/row-cost.ts
 */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  BusMessages,
  type EmailEvent,
  type StoredSendRequest,
  commandOfOneCopy,
  ulid,
} from '@mailyard/contracts';
import {
  type Db,
  configFrom,
  migrate,
  openDatabase,
  outboxMessage,
  readMigrations,
} from '@mailyard/platform';
import { type AcceptedSendRows, createTenant, recordEmailEventBatch, sends } from '@mailyard/store';
import { startPrivatePostgres } from '@mailyard/testkit/private-servers';
import { REPO_ROOT } from '@mailyard/testkit/process';
import { emailEvent } from '@mailyard/testkit/webhooks';
import { printAndKeep, runMain } from '../support/proc';

const EMAILS = Number(process.env.BENCH_ROWS_EMAILS ?? 4000);
const GROUP = Number(process.env.BENCH_ROWS_GROUP ?? 20);
const ROUNDS = Number(process.env.BENCH_ROWS_ROUNDS ?? 2);
const BASE_ROOT = process.env.BENCH_SERVICES_ROOT;
const TICK_MS = 1000 / 100; // /proc/<pid>/stat counts clock ticks (USER_HZ 100)

const run = promisify(execFile);
/** The private server's own binaries (pg_waldump), newest version installed. */
const BIN = join(
  '/usr/lib/postgresql',
  readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))[0]!,
  'bin',
);

const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;

/** The request as the gateway stores it (a small text/HTML send, as the send bench posts). */
const REQUEST = {
  mailer_id: 'm1',
  from: { email: 'news@bench.example', name: 'Bench' },
  to: [{ email: 'r@sink.example' }],
  subject: 'Bench message',
  content: [
    { type: 'text/plain', value: 'Hello from the bench.' },
    { type: 'text/html', value: '<p>Hello from the <b>bench</b>.</p>' },
  ],
} as unknown as StoredSendRequest;

const delivered = (refId: string, email: string): EmailEvent =>
  emailEvent('MAIL_DELIVERED', new Date().toISOString(), {
    ref_id: refId,
    mailer_id: 'm1',
    email: [email],
    custom_args: null,
    message_id: `<${ulid()}@bench.example>`,
  });

interface Side {
  name: string;
  db: Db;
  pid: number;
  tenantId: string;
  /** Per recipient accepted and not yet delivered: ref, copy, log row. */
  pending: Array<{ refId: string; copyId: string; logId: string; email: string }>;
  totals: Record<string, { emails: number; walBytes: number; cpuMs: number }>;
}

function backendCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime + stime
}

async function walLsn(db: Db): Promise<string> {
  return (await db.query<{ l: string }>('SELECT pg_current_wal_insert_lsn()::text AS l')).rows[0]!.l;
}

/** WAL of one phase by record type (pg_waldump --stats=record): records and bytes per email. */
const walRecords: Record<string, Record<string, Record<string, string>>> = {};
// "Heap/INSERT  <n> (pct)  <record bytes> (pct)  <fpi bytes> (pct)  <combined bytes> (pct)"
const STATS_LINE = /^(\S+\/\S+)\s+(\d+)\s+\(\s*[\d.]+\)\s+\d+\s+\(\s*[\d.]+\)\s+\d+\s+\(\s*[\d.]+\)\s+(\d+)/;

async function walByRecord(side: Side, phase: string, from: string, emails: number): Promise<void> {
  const { rows } = await side.db.query<{ to: string; dir: string }>(
    "SELECT pg_current_wal_insert_lsn()::text AS to, current_setting('data_directory') || '/pg_wal' AS dir",
  );
  await side.db.query('SELECT pg_switch_wal()'); // the phase's records flushed into a closed segment
  const { stdout } = await run(
    join(BIN, 'pg_waldump'),
    ['--stats=record', '-p', rows[0]!.dir, '-s', from, '-e', rows[0]!.to],
    {
      maxBuffer: 1 << 24,
    },
  );
  const out: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const m = STATS_LINE.exec(line);
    if (m && Number(m[3]) > 0)
      out[m[1]!] = `${round(Number(m[2]) / emails)} records, ${Math.round(Number(m[3]) / emails)} bytes`;
  }
  const bySide = walRecords[side.name] ?? {};
  walRecords[side.name] = bySide;
  bySide[phase] = out;
}

async function measure(side: Side, phase: string, emails: number, work: () => Promise<void>) {
  const lsn = await walLsn(side.db);
  const cpu0 = backendCpuMs(side.pid);
  await work();
  const cpuMs = backendCpuMs(side.pid) - cpu0;
  const { rows } = await side.db.query<{ d: string }>(
    'SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::text AS d',
    [lsn],
  );
  const t = side.totals[phase] ?? { emails: 0, walBytes: 0, cpuMs: 0 };
  side.totals[phase] = t;
  t.emails += emails;
  t.walBytes += Number(rows[0]!.d);
  t.cpuMs += cpuMs;
}

async function accept(side: Side, n: number): Promise<void> {
  for (let i = 0; i < n; i += GROUP) {
    const batch: AcceptedSendRows[] = [];
    for (let j = i; j < Math.min(n, i + GROUP); j++) {
      const refId = ulid();
      const copyId = `${refId}.1`;
      const email = `r${j}@sink.example`;
      batch.push({
        send: {
          refId,
          tenantId: side.tenantId,
          mailerId: 'm1',
          campaignId: null,
          customArgs: null,
          request: REQUEST,
        },
        recipients: [{ copyId, recipient: email, recipientDomain: 'sink.example', recipientType: 'to' }],
        outbox: [
          outboxMessage(
            BusMessages.sendEmail,
            commandOfOneCopy({ ref_id: refId, tenant_id: side.tenantId, copy_id: copyId, attempt: 1 }),
            { tenantId: side.tenantId },
          ),
        ],
      });
    }
    await sends.insertAcceptedBatch(side.db, batch);
  }
  // The log row ids the gateway generated, in order.
  const { rows } = await side.db.query<{ id: string; ref_id: string; copy_id: string; recipient: string }>(
    'SELECT id, ref_id, copy_id, recipient FROM email_logs WHERE tenant_id = $1 AND send_outcome IS NULL ORDER BY id',
    [side.tenantId],
  );
  side.pending = rows.map((r) => ({ refId: r.ref_id, copyId: r.copy_id, logId: r.id, email: r.recipient }));
}

async function deliver(side: Side): Promise<void> {
  const all = side.pending;
  for (let i = 0; i < all.length; i += GROUP) {
    const records = all.slice(i, i + GROUP).map((p) => ({
      tenantId: side.tenantId,
      copyId: p.copyId,
      recipients: [{ logId: p.logId, email: p.email }],
      event: delivered(p.refId, p.email),
      attempt: 1,
    }));
    await recordEmailEventBatch(side.db, records);
  }
  side.pending = [];
}

async function relay(side: Side): Promise<void> {
  for (;;) {
    const { rowCount } = await side.db.query(
      `DELETE FROM outbox WHERE id = ANY(ARRAY(
         SELECT id FROM outbox WHERE sent_at IS NULL ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED
       )) RETURNING id, exchange, routing_key, message`,
    );
    if (rowCount === 0) return;
  }
}

async function openSide(
  server: Awaited<ReturnType<typeof startPrivatePostgres>>,
  name: string,
  root: string,
) {
  const url = await server.createDatabase(`rows_${name}`);
  const db = await openDatabase(configFrom({ DATABASE_URL: url, DB_POOL_SIZE: '1' }));
  const applied = await migrate(db, readMigrations(join(root, 'libs', 'platform', 'migrations')));
  const pid = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const tenantId = (await createTenant(db, { name, tier: 'standard' })).id;
  const side: Side = { name, db, pid, tenantId, pending: [], totals: {} };
  return { side, schema: applied.at(-1) };
}

async function main(): Promise<void> {
  if (!BASE_ROOT)
    throw new Error('set BENCH_SERVICES_ROOT to the installed checkout whose schema is the baseline');
  const server = await startPrivatePostgres();
  const sides: Side[] = [];
  const report: Record<string, unknown> = {
    benchmark: 'send row-cost (libs/store writers on a private PostgreSQL)',
    at: new Date().toISOString(),
    loadavg_at_start: loadavg().map((l) => round(l)),
    emails_per_round: EMAILS,
    group: GROUP,
    rounds: ROUNDS,
  };
  try {
    const schemas: Record<string, string | undefined> = {};
    for (const [name, root] of [
      ['base', BASE_ROOT],
      ['branch', REPO_ROOT],
    ] as const) {
      const { side, schema } = await openSide(server, name, root);
      sides.push(side);
      schemas[name] = `${root} (last migration ${schema})`;
    }
    report.schemas = schemas;
    // Warm-up (caches, JIT of the statements' plans) outside the measurement.
    for (const s of sides) {
      await accept(s, GROUP * 2);
      await deliver(s);
      await relay(s);
    }
    for (let r = 0; r < ROUNDS; r++) {
      for (const s of r % 2 ? [...sides].reverse() : sides) {
        await measure(s, 'accept', EMAILS, () => accept(s, EMAILS));
        await measure(s, 'deliver', EMAILS, () => deliver(s));
        await measure(s, 'relay', EMAILS, () => relay(s));
      }
    }
    // One more round per schema, its WAL read back by record type (not in the figures above:
    // pg_switch_wal pads the segment).
    for (const s of sides) {
      for (const [phase, work] of [
        ['accept', () => accept(s, EMAILS)],
        ['deliver', () => deliver(s)],
        ['relay', () => relay(s)],
      ] as const) {
        const from = await walLsn(s.db);
        await work();
        await walByRecord(s, phase, from, EMAILS);
      }
    }
    report.wal_by_record_per_email = walRecords;
    report.per_email = Object.fromEntries(
      sides.map((s) => [
        s.name,
        Object.fromEntries(
          Object.entries(s.totals).map(([phase, t]) => [
            phase,
            { wal_bytes: Math.round(t.walBytes / t.emails), backend_cpu_ms: round(t.cpuMs / t.emails, 3) },
          ]),
        ),
      ]),
    );
    const tables: Record<string, unknown> = {};
    for (const s of sides) {
      // pg_stat_* reach the views after the backend flushed them (at most a second later).
      await s.db.query('SELECT pg_stat_force_next_flush()');
      await new Promise((r) => setTimeout(r, 1100));
      const { rows } = await s.db.query(
        `SELECT relname AS table, n_tup_ins::int AS inserted, n_tup_upd::int AS updated,
                n_tup_hot_upd::int AS hot_updated, n_tup_del::int AS deleted,
                (SELECT count(*)::int FROM pg_index i WHERE i.indrelid = t.relid) AS indexes,
                pg_total_relation_size(relid)::bigint AS bytes
           FROM pg_stat_user_tables t
          WHERE relname IN ('sends', 'email_logs', 'email_events', 'outbox') ORDER BY relname`,
      );
      tables[s.name] = rows;
    }
    report.tables = tables;
    report.loadavg_at_end = loadavg().map((l) => round(l));
  } finally {
    for (const s of sides) await s.db.close();
    await server.destroy();
  }
  printAndKeep('send-row-cost', report);
}

runMain(main);
