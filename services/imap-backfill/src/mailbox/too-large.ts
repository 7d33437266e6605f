/**
 * The per-message size cap of backfill and live sync (IMAP_MAX_MESSAGE_BYTES, 25 MB like the
 * MX). A message over it is not read whole (IMAP: its RFC822.SIZE says so and it is not fetched,
 * or a fetch of the first cap + 1 bytes got them all) and is posted as the INCOMING_EMAIL error
 * form (docs/inbound.md "The INCOMING_EMAIL object": MIME, encoding or extraction failures), naming the
 * message, its size and the limit: the receiver learns a mail is there that it did not get,
 * as the MX's sender learns it from 552. It takes its place in a job's `count` like any post.
 */
import type { MessageRef, RawMessage } from './mailbox-client';

/** The size of `msg` when over `maxBytes` (what the client knows of it), else null. */
export function oversizeOf(msg: Pick<RawMessage, 'source' | 'oversize'>, maxBytes: number): number | null {
  if (msg.oversize !== undefined && msg.oversize > maxBytes) return msg.oversize;
  return msg.source.length > maxBytes ? msg.source.length : null;
}

/** The error form's `error`: which message, how large, the limit. */
export function tooLargeError(
  msg: Pick<MessageRef, 'id' | 'receivedAt'>,
  folder: string,
  size: number,
  maxBytes: number,
): string {
  const how = size > maxBytes + 1 ? `${size} bytes` : `more than ${maxBytes} bytes`;
  const received = msg.receivedAt.toISOString().replace(/\.\d+Z$/, 'Z');
  return `message too large: ${how} (limit ${maxBytes}); folder ${folder}, id ${msg.id}, received ${received}`;
}
