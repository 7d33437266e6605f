import { z } from 'zod';

export const TENANT_TIERS = ['standard', 'enterprise'] as const;
export type TenantTier = (typeof TENANT_TIERS)[number];

export const CreateTenantSchema = z.object({
  name: z.string({ required_error: 'name is required' }).trim().min(1, 'name is required').max(255),
  tier: z
    .enum(TENANT_TIERS, { errorMap: () => ({ message: 'tier must be standard or enterprise' }) })
    .default('standard'),
});
export type CreateTenantRequest = z.infer<typeof CreateTenantSchema>;

export interface CreateTenantResponse {
  success: true;
  tenant_id: string;
  key_id: string;
  api_key: string;
}
export interface CreateKeyResponse {
  success: true;
  tenant_id: string;
  key_id: string;
  api_key: string;
}
