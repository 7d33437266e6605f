/**
 * The first-attempt `send.email` commands of accepted sends (libs/contracts bus/send-command.ts),
 * as outbox rows written with the sends: sendCommands packs the copies of the sends written
 * together (a group commit, or one send written alone), send after send in plan order, into
 * messages of at most COPIES_PER_COMMAND copies (a send that does not fit in what is left of a
 * message continues in the next). Every message has the one shape: an item per send, with the
 * send's tenant and trace; a message of one send is a group of one.
 */
import { BusMessages, MAX_COPIES_PER_COMMAND, type SendEmailItem } from '@mailyard/contracts';
import { childTraceparent, currentTrace, outboxMessage } from '@mailyard/platform';
import type { OutboxMessage } from '../sends';

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

interface Part {
  send: SendCopies;
  copyIds: readonly string[];
}

/** The commands of the sends written together, several sends per message (see the file top). */
export function sendCommands(sends: readonly SendCopies[], perCommand = COPIES_PER_COMMAND): OutboxMessage[] {
  const size = Math.max(1, Math.min(perCommand, MAX_COPIES_PER_COMMAND));
  const messages: Part[][] = [];
  let current: Part[] = [];
  let room = size;
  for (const send of sends) {
    for (let i = 0; i < send.copyIds.length; ) {
      const take = Math.min(room, send.copyIds.length - i);
      current.push({
        send,
        copyIds: take === send.copyIds.length ? send.copyIds : send.copyIds.slice(i, i + take),
      });
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
  return messages.map(sendCommand);
}

/** One message for its parts: the envelope names the tenant when the parts share one. */
function sendCommand(parts: readonly Part[]): OutboxMessage {
  const tenantId = parts[0]!.send.tenantId;
  const items: SendEmailItem[] = parts.map(({ send, copyIds }) => ({
    tenant_id: send.tenantId,
    ref_id: send.refId,
    copy_ids: [...copyIds],
    // A span of its own in the send's trace.
    traceparent: childTraceparent(send.traceparent),
  }));
  return outboxMessage(
    BusMessages.sendEmail,
    { sends: items, attempt: 1 },
    {
      ...(parts.every((p) => p.send.tenantId === tenantId) ? { tenantId } : {}),
      traceparent: items[0]!.traceparent,
    },
  );
}
