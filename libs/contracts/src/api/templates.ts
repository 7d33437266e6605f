import { z } from 'zod';
import { ErrorText } from '../errors';
import { hasControlChars } from '../validation/control';

export const CONTENT_TYPES = ['text/html', 'text/plain'] as const;

export const ContentSchema = z.object(
  {
    type: z.enum(CONTENT_TYPES, {
      errorMap: () => ({ message: 'content type must be text/html or text/plain' }),
    }),
    value: z.string({
      required_error: 'content value is required',
      invalid_type_error: 'content value must be a string',
    }),
  },
  { invalid_type_error: 'content items must be objects' },
);
export type Content = z.infer<typeof ContentSchema>;

const contentList = z
  .array(ContentSchema, {
    required_error: ErrorText.contentRequired,
    invalid_type_error: 'content must be an array',
  })
  .min(1, ErrorText.contentRequired)
  // The same rule as the send payload: at most one text/plain and one text/html value (a send
  // would otherwise silently use the last of two).
  .refine((list) => new Set(list.map((c) => c.type)).size === list.length, ErrorText.contentTypeTwice);

// The subject becomes a header: no line breaks (header injection) or other control characters.
const noControlChars = (v: string) => !hasControlChars(v);
const SUBJECT_CONTROL = 'subject must not contain line breaks or other control characters';

const requiredText = (message: string) =>
  z.string({ required_error: message, invalid_type_error: message }).trim().min(1, message);

export const CreateTemplateSchema = z.object({
  name: requiredText(ErrorText.nameRequired).pipe(z.string().max(255, 'name must be at most 255 characters')),
  subject: z
    .string({ required_error: ErrorText.subjectRequired, invalid_type_error: ErrorText.subjectRequired })
    .min(1, ErrorText.subjectRequired)
    .max(998, 'subject must be at most 998 characters')
    .refine(noControlChars, SUBJECT_CONTROL),
  content: contentList,
});
export type CreateTemplateRequest = z.infer<typeof CreateTemplateSchema>;

export const UpdateTemplateSchema = z.object({
  template_id: requiredText(ErrorText.templateIdRequired),
  name: requiredText(ErrorText.nameRequired)
    .pipe(z.string().max(255, 'name must be at most 255 characters'))
    .optional(),
  subject: z
    .string({ invalid_type_error: ErrorText.subjectRequired })
    .min(1, ErrorText.subjectRequired)
    .max(998, 'subject must be at most 998 characters')
    .refine(noControlChars, SUBJECT_CONTROL)
    .optional(),
  content: contentList.optional(),
});
export type UpdateTemplateRequest = z.infer<typeof UpdateTemplateSchema>;

export interface Template {
  id: string;
  name: string;
  subject: string;
  content: Content[];
  created_at: string;
  updated_at: string;
}

export interface CreateTemplateResponse {
  success: true;
  template_id: string;
}
export interface GetTemplateResponse {
  success: true;
  template: Pick<Template, 'name' | 'subject' | 'content'>;
}
export interface ListTemplatesResponse {
  success: true;
  templates: Array<{ id: string; name: string }>;
  next_page_token: string | null;
}
