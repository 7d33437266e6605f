/**
 * The per-copy steps issue 14's fourth pass changed (branch h/percopy), each timed in its former
 * form and its current one in this one process, alternated over rounds (medians of CPU µs per
 * copy), so the machine's load cannot skew the comparison:
 *
 * - `event_outbox`: the outbox validation of a group commit's email events (one email.event
 *   version-2 message per 100 MAIL_DELIVERED events): the zod schema per event before, the
 *   plain-code check (email-event-fast.ts) through outboxMessage now;
 * - `dkim_header_selection`: DKIM's header selection and relaxed canonicalization of a built
 *   copy's header block: nodemailer's relaxedHeaders (splits its 30-name list per message)
 *   before, services/send/src/dkim.ts's now;
 * - `per_recipient_check`: `isPerRecipient` of a 100-recipient send with substitutions, asked once
 *   per copy: Object.keys before, the first own key now.
 *
 *   pnpm tsx bench/send/per-copy-micro.ts          (BENCH_MICRO_ROUNDS, default 15)
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { BusMessages, type EmailEvent, emptyTracking, isPerRecipient } from '@mailyard/contracts';
import { outboxMessage } from '@mailyard/platform';
import { FIELD_NAMES, parseHeaderFields, relaxedHeaders } from '@mailyard/send/src/dkim';
import { REPO_ROOT } from '@mailyard/testkit/process';
import { printAndKeep, runMain } from '../support/proc';

const ROUNDS = Number(process.env.BENCH_MICRO_ROUNDS ?? 15);

/** CPU µs per call of `fn` over `n` calls. */
function cpuUsPer(n: number, fn: (i: number) => unknown): number {
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) fn(i);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function deliveredEvent(i: number): EmailEvent {
  return {
    event: 'MAIL_DELIVERED',
    success: true,
    details: {
      ref_id: '01JB8W7Y3K5Q9M2N4P6R8T0V1X',
      mailer_id: 'domain_01JB8W7Y3K5Q9M2N4P6R8T0V1X',
      email: [`reader${i}@example.com`],
      custom_args: { campaign: 'november', batch: String(i % 7) },
      message_id: `<01JB8W7Y3K5Q9M2N4P6R8T0V1X.${i}@mailyard.test>`,
      thread_id: '',
      webhook_id: '',
      event_at: '2026-11-26T23:00:00.000001Z',
      tracking: emptyTracking(),
      failed_reason: '',
    },
  };
}

const HEAD = Buffer.from(
  [
    'Content-Type: multipart/alternative; boundary="--_NmP-0123456789abcdef-Part_1"',
    'From: Example News <news@example.org>',
    'To: Reader Name <reader@example.com>',
    'Subject: Your November summary, Reader',
    'Message-ID: <01JB8W7Y3K5Q9M2N4P6R8T0V1X.1@mailyard.test>',
    'Date: Thu, 26 Nov 2026 23:00:00 +0000',
    'MIME-Version: 1.0',
    'X-Mailyard-Ref: 01JB8W7Y3K5Q9M2N4P6R8T0V1X',
    '',
  ].join('\r\n'),
  'latin1',
);
// nodemailer is the send service's dependency: resolved from there.
const nodemailerSign: unknown = createRequire(join(REPO_ROOT, 'services/send/package.json'))(
  'nodemailer/lib/dkim/sign',
);
const theirRelaxedHeaders = (
  nodemailerSign as {
    relaxedHeaders(h: Array<{ key: string; line: string }>, names: string): unknown;
  }
).relaxedHeaders;

async function main(): Promise<void> {
  const events = Array.from({ length: 100 }, (_, i) => ({ event: deliveredEvent(i) }));
  const fields = parseHeaderFields(HEAD);
  const subs = Object.fromEntries(
    Array.from({ length: 100 }, (_, i) => [`reader${i}@example.com`, { n: `${i}` }]),
  );
  const steps: Record<
    string,
    { before: (i: number) => unknown; now: (i: number) => unknown; n: number; per: number }
  > = {
    event_outbox: {
      before: () => BusMessages.emailEventGroup.schema.safeParse({ events }),
      now: () => outboxMessage(BusMessages.emailEventGroup, { events }),
      n: 200,
      per: events.length,
    },
    dkim_header_selection: {
      before: () => theirRelaxedHeaders(fields, FIELD_NAMES),
      now: () => relaxedHeaders(fields),
      n: 20_000,
      per: 1,
    },
    per_recipient_check: {
      before: () => subs !== undefined && Object.keys(subs).length > 0,
      now: () => isPerRecipient({ substitutions: subs }),
      n: 20_000,
      per: 1,
    },
  };
  const runs: Record<string, { before: number[]; now: number[] }> = {};
  for (const name of Object.keys(steps)) runs[name] = { before: [], now: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, s] of Object.entries(steps)) {
      runs[name]!.before.push(cpuUsPer(s.n, s.before) / s.per);
      runs[name]!.now.push(cpuUsPer(s.n, s.now) / s.per);
    }
  }
  printAndKeep('send-per-copy-micro', {
    benchmark: 'send-per-copy-micro',
    note: `median CPU µs per copy over ${ROUNDS} alternated rounds (the first rounds warm the JIT)`,
    steps: Object.fromEntries(
      Object.entries(runs).map(([name, r]) => [
        name,
        { before_us: Number(median(r.before).toFixed(3)), now_us: Number(median(r.now).toFixed(3)) },
      ]),
    ),
  });
}

runMain(main);
