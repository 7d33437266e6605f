/**
 * The expired rows of the retention benchmark: `total` rows older than every default duration
 * (40 days old), all finished, of a tenant of their own, spread as an installation's tables hold
 * them: 20 % sends (with a 1 KB stored request), 20 % their log rows, 40 % events (two per send),
 * 10 % delivered webhook deliveries (a 1 KB body, one attempt each, which the sweep removes by
 * cascade and does not count) and 10 % processed inbound messages (2 KB raw). Written by
 * generate_series in chunks, then vacuumed and analysed, as a long-lived database would be.
 */
import type pg from 'pg';

const CHUNK = 50_000;

export interface Seeded {
  sends: number;
  email_logs: number;
  email_events: number;
  webhook_deliveries: number;
  inbound_messages: number;
  seconds: number;
}

export async function seedExpired(c: pg.Client, total: number): Promise<Seeded> {
  const t0 = Date.now();
  const sendsN = Math.round(total * 0.2);
  const hooksN = Math.round(total * 0.1);
  const inboundN = total - 4 * sendsN - hooksN;
  const tenant = 'tenant_retention_bench_seed';
  await c.query(
    `INSERT INTO tenants (id, name, tier) VALUES ($1, 'seed', 'standard') ON CONFLICT DO NOTHING`,
    [tenant],
  );
  // Ages from 40 days back, a row every 2 s of a 9-day span: all past the 30-day defaults.
  const age = (g: string) => `now() - interval '40 days' + (${g}) * interval '2 seconds'`;
  for (let from = 0; from < sendsN; from += CHUNK) {
    const to = Math.min(sendsN, from + CHUNK) - 1;
    await c.query(
      `INSERT INTO sends (ref_id, tenant_id, mailer_id, request, created_at)
       SELECT 'seed' || lpad(g::text, 9, '0'), $1, 'm1',
              jsonb_build_object('subject', 'Digest ' || g, 'content',
                jsonb_build_array(jsonb_build_object('type', 'text/html', 'value', repeat('<p>news</p>', 90)))),
              ${age('g')}
         FROM generate_series($2::int, $3::int) g`,
      [tenant, from, to],
    );
    await c.query(
      `INSERT INTO email_logs (id, ref_id, tenant_id, copy_id, recipient, recipient_domain, recipient_type,
                               status, subject, mailer_id, message_id, send_outcome, attempts, created_at, delivered_at)
       SELECT 'seedlog' || lpad(g::text, 9, '0'), 'seed' || lpad(g::text, 9, '0'), $1,
              'seed' || lpad(g::text, 9, '0') || '.1', 'user' || g || '@example.com', 'example.com', 'to',
              'MAIL_DELIVERED', 'Digest ' || g, 'm1', '<' || g || '@bench.test>', 'MAIL_DELIVERED', 1,
              ${age('g')}, ${age('g')} + interval '1 second'
         FROM generate_series($2::int, $3::int) g`,
      [tenant, from, to],
    );
    await c.query(
      `INSERT INTO email_events (tenant_id, ref_id, copy_id, event, attempt, event_at, payload, recipient_key)
       SELECT $1, 'seed' || lpad(g::text, 9, '0'), 'seed' || lpad(g::text, 9, '0') || '.1', e.event, 0,
              ${age('g')} + e.after, jsonb_build_object('event', e.event, 'email', 'user' || g || '@example.com',
                'message_id', '<' || g || '@bench.test>', 'custom_args', jsonb_build_object('i', g)),
              'user' || g || '@example.com'
         FROM generate_series($2::int, $3::int) g,
              (VALUES ('MAIL_DELIVERED', interval '1 second'), ('MAIL_OPENED', interval '1 hour')) e(event, after)`,
      [tenant, from, to],
    );
  }
  for (let from = 0; from < hooksN; from += CHUNK) {
    const to = Math.min(hooksN, from + CHUNK) - 1;
    await c.query(
      `WITH d AS (
         INSERT INTO webhook_deliveries (id, tenant_id, target_kind, webhook_id, event_types, body, status,
                                         attempts, created_at, updated_at)
         SELECT 'whd_seed' || lpad(g::text, 9, '0'), $1, 'webhook', 'hook_seed', '{MAIL_DELIVERED}',
                repeat('{"event":"MAIL_DELIVERED"}', 40), 'delivered', 1, ${age('g')}, ${age('g')}
           FROM generate_series($2::int, $3::int) g
         RETURNING id, created_at)
       INSERT INTO webhook_delivery_attempts (delivery_id, attempt, at, status_code, latency_ms)
       SELECT id, 1, created_at, 200, 12 FROM d`,
      [tenant, from, to],
    );
  }
  for (let from = 0; from < inboundN; from += CHUNK) {
    const to = Math.min(inboundN, from + CHUNK) - 1;
    await c.query(
      `INSERT INTO inbound_messages (id, received_at, remote_ip, helo, mail_from, recipients, raw, size,
                                     status, processed_at)
       SELECT 'inmsg_seed' || lpad(g::text, 9, '0'), ${age('g')}, '192.0.2.1', 'mx.example', 'a@example.com',
              '[]', convert_to(repeat('Subject: hello' || chr(10), 128), 'UTF8'), 1920, 'processed',
              ${age('g')}
         FROM generate_series($1::int, $2::int) g`,
      [from, to],
    );
  }
  for (const t of [
    'sends',
    'email_logs',
    'email_events',
    'webhook_deliveries',
    'webhook_delivery_attempts',
    'inbound_messages',
  ])
    await c.query(`VACUUM ANALYZE ${t}`);
  return {
    sends: sendsN,
    email_logs: sendsN,
    email_events: 2 * sendsN,
    webhook_deliveries: hooksN,
    inbound_messages: inboundN,
    seconds: Math.round((Date.now() - t0) / 100) / 10,
  };
}
