import { BusMessages, commandOfOneCopy } from '@mailyard/contracts';
import { type Db, outboxMessage, writeOutboxBatch } from '@mailyard/platform';
import { findUnfinishedCopies } from '@mailyard/store';

/**
 * The in-process bus (embedded mode) keeps queued commands and pending retry timers in memory,
 * so a crash loses them although their sends are stored. At start, before consuming, every copy
 * with recipients still without a send outcome (QUEUED) is commanded again: attempt 1 when nothing was recorded, else the
 * attempt after the last recorded one (a retry that was waiting). Copies out of attempts are
 * left alone. Replays are harmless: the consumer skips attempts already recorded.
 * Not used with RabbitMQ, whose durable queues keep commands and delayed retries across crashes.
 */
export async function recommandUnfinishedCopies(db: Db, maxAttempts: number): Promise<number> {
  const rows = await findUnfinishedCopies(db);
  const commands = rows
    .filter((r) => r.last_attempt < maxAttempts)
    .map((r) =>
      outboxMessage(
        BusMessages.sendEmail,
        commandOfOneCopy({
          ref_id: r.ref_id,
          tenant_id: r.tenant_id,
          copy_id: r.copy_id,
          attempt: r.last_attempt + 1,
        }),
        { tenantId: r.tenant_id },
      ),
    );
  if (commands.length === 0) return 0;
  await db.transaction((tx) => writeOutboxBatch(tx, commands));
  return commands.length;
}
