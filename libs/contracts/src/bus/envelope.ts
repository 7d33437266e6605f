import { z } from 'zod';

/** Every bus message is wrapped in a versioned envelope; consumers validate it. */
export const BusEnvelopeSchema = z.object({
  id: z.string().min(1),
  type: z.string().min(1),
  version: z.number().int().positive(),
  occurred_at: z.string(),
  traceparent: z.string().optional(),
  tenant_id: z.string().optional(),
  payload: z.unknown(),
});
export type BusEnvelope<T = unknown> = Omit<z.infer<typeof BusEnvelopeSchema>, 'payload'> & { payload: T };
