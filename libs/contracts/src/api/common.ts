import { z } from 'zod';

export interface ErrorEnvelope {
  success: false;
  error: string;
  details?: string;
}

export const PAGE_SIZE_DEFAULT = 20;
export const PAGE_SIZE_MAX = 50;

/** `pageSize` and `pageToken` query parameters shared by every list endpoint. */
export const PageQuerySchema = z.object({
  pageSize: z.coerce.number().int().min(1).max(PAGE_SIZE_MAX).default(PAGE_SIZE_DEFAULT),
  pageToken: z.string().min(1).optional(),
});
export type PageQuery = z.infer<typeof PageQuerySchema>;
