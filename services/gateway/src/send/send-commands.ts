/**
 * The first-attempt `send.email` commands of accepted sends (libs/contracts send-command.ts and
 * send-command-group.ts), as outbox rows written with the sends:
 *
 * - sendCommands: the commands of ONE send, chunks of COPIES_PER_COMMAND copies (version 1; a
 *   chunk of one copy in the single-copy shape). What a send written alone (Idempotency-Key) gets.
 * - groupedSendCommands: the commands of the sends of one group commit together: their copies,
 *   send after send in plan order, packed into messages of at most COPIES_PER_COMMAND copies (a
 *   send that does not fit in what is left of a message continues in the next). A message holding
 *   the copies of several sends is version 2 (one item per send, with the send's tenant and
 *   trace); a message holding copies of one send only is written exactly as sendCommands writes
 *   it, so a quiet gateway (groups of one send) writes the version-1 shapes.
 */
import { BusMessages, MAX_COPIES_PER_COMMAND, type SendEmailGroupItem } from '@mailyard/contracts';
import { childTraceparent, currentTrace, outboxMessage } from '@mailyard/platform';
import type { OutboxMessage } from '@mailyard/store';

/** Most copies one `send.email` message names (a batch with substitutions has a copy per `to`). */
export const COPIES_PER_COMMAND = 100;

/** One accepted send's copies to command, and the trace of the request that accepted it. */
export interface SendCopies {
  tenantId: string;
  refId: string;
  copyIds: readonly string[];
  /** The accepting request's trace (undefined: none, the commands start a new one). */
  traceparent: string | undefined;
}

/** The copies of a send accepted in the current async context (its request's trace). */
export function sendCopies(tenantId: string, refId: string, copyIds: readonly string[]): SendCopies {
  return { tenantId, refId, copyIds, traceparent: currentTrace()?.traceparent };
}

/** One version-1 command for copies of one send. */
function oneSendCommand(s: SendCopies, copyIds: readonly string[]): OutboxMessage {
  const copies = copyIds.length === 1 ? { copy_id: copyIds[0]! } : { copy_ids: [...copyIds] };
  return outboxMessage(
    BusMessages.sendEmail,
    { ref_id: s.refId, tenant_id: s.tenantId, ...copies, attempt: 1 },
    { tenantId: s.tenantId, traceparent: s.traceparent },
  );
}

const commandSize = (perCommand: number) => Math.max(1, Math.min(perCommand, MAX_COPIES_PER_COMMAND));

/**
 * The send's first-attempt commands: chunks of `perCommand` copies in plan order, a chunk of one
 * written in the single-copy shape.
 */
export function sendCommands(s: SendCopies, perCommand = COPIES_PER_COMMAND): OutboxMessage[] {
  const size = commandSize(perCommand);
  const out: OutboxMessage[] = [];
  for (let i = 0; i < s.copyIds.length; i += size) out.push(oneSendCommand(s, s.copyIds.slice(i, i + size)));
  return out;
}

/** The commands of the sends of one group commit, several sends per message (see the file top). */
export function groupedSendCommands(
  sends: readonly SendCopies[],
  perCommand = COPIES_PER_COMMAND,
): OutboxMessage[] {
  const size = commandSize(perCommand);
  const messages: Array<Array<{ send: SendCopies; copyIds: readonly string[] }>> = [];
  let current: Array<{ send: SendCopies; copyIds: readonly string[] }> = [];
  let room = size;
  for (const send of sends) {
    for (let i = 0; i < send.copyIds.length; ) {
      const take = Math.min(room, send.copyIds.length - i);
      current.push({ send, copyIds: send.copyIds.slice(i, i + take) });
      i += take;
      room -= take;
      if (room === 0) {
        messages.push(current);
        current = [];
        room = size;
      }
    }
  }
  if (current.length > 0) messages.push(current);
  return messages.map((parts) => {
    if (parts.length === 1) return oneSendCommand(parts[0]!.send, parts[0]!.copyIds);
    const tenants = new Set(parts.map((p) => p.send.tenantId));
    const items: SendEmailGroupItem[] = parts.map(({ send, copyIds }) => ({
      tenant_id: send.tenantId,
      ref_id: send.refId,
      copy_ids: [...copyIds],
      // A span of its own in the send's trace, as the envelope of a per-send command would be.
      traceparent: childTraceparent(send.traceparent),
    }));
    return outboxMessage(
      BusMessages.sendEmailGroup,
      { sends: items, attempt: 1 },
      {
        ...(tenants.size === 1 ? { tenantId: parts[0]!.send.tenantId } : {}),
        traceparent: items[0]!.traceparent,
      },
    );
  });
}
