import {
  Exchange,
  RoutingKey,
  SEND_EMAIL_COMMAND,
  SEND_EMAIL_COMMAND_VERSION,
  type SendEmailCommand,
} from '@mailyard/contracts';
import { type Db, enqueueOutbox, envelope } from '@mailyard/platform';

/**
 * The in-process bus (embedded mode) keeps queued commands and pending retry timers in memory,
 * so a crash loses them although their sends are stored. At start, before consuming, every copy
 * with recipients still without a send outcome (QUEUED) is commanded again: attempt 1 when nothing was recorded, else the
 * attempt after the last recorded one (a retry that was waiting). Copies out of attempts are
 * left alone. Replays are harmless: the consumer skips attempts already recorded.
 * Not used with RabbitMQ, whose durable queues keep commands and delayed retries across crashes.
 */
export async function recommandUnfinishedCopies(db: Db, maxAttempts: number): Promise<number> {
  const { rows } = await db.query<{
    ref_id: string;
    tenant_id: string;
    copy_id: string;
    last_attempt: number;
  }>(
    `SELECT l.ref_id, l.tenant_id, l.copy_id,
            COALESCE((SELECT max(e.attempt) FROM email_events e WHERE e.copy_id = l.copy_id), 0)::int AS last_attempt
       FROM email_logs l
      WHERE l.send_outcome IS NULL
      GROUP BY l.ref_id, l.tenant_id, l.copy_id`,
  );
  const commands: SendEmailCommand[] = rows
    .filter((r) => r.last_attempt < maxAttempts)
    .map((r) => ({
      ref_id: r.ref_id,
      tenant_id: r.tenant_id,
      copy_id: r.copy_id,
      attempt: r.last_attempt + 1,
    }));
  if (commands.length === 0) return 0;
  await db.transaction(async (tx) => {
    for (const cmd of commands) {
      await enqueueOutbox(
        tx,
        Exchange.commands,
        RoutingKey.sendEmail,
        envelope(SEND_EMAIL_COMMAND, cmd, { version: SEND_EMAIL_COMMAND_VERSION, tenantId: cmd.tenant_id }),
      );
    }
  });
  return commands.length;
}
