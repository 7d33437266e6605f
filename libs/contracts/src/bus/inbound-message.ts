import { z } from 'zod';

/**
 * A raw message stored by the MX service (inbound_messages row) and ready to be parsed, routed
 * and posted. Published through the outbox in the transaction that stored the row, so the
 * announcement survives a crash between the 250 and the processing.
 */
export const INBOUND_MESSAGE_STORED = 'inbound.message.stored';
export const INBOUND_MESSAGE_ROUTING_KEY = 'inbound.message';
export const INBOUND_MESSAGE_QUEUE = 'inbound-smtp.messages';
export const InboundMessageStoredSchema = z.object({ message_id: z.string().min(1) });
export type InboundMessageStored = z.infer<typeof InboundMessageStoredSchema>;
