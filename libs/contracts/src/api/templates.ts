import { z } from 'zod';
import { ErrorText } from '../errors';
import { hasControlChars } from '../validation/control';
import { type RuleCtx, at, isObject, rule } from '../validation/rule';

export const CONTENT_TYPES = ['text/html', 'text/plain'] as const;
export type ContentType = (typeof CONTENT_TYPES)[number];

export interface Content {
  type: ContentType;
  value: string;
}

const CONTENT_TYPE_MESSAGE = 'content type must be text/html or text/plain';

/**
 * One content item `{ type, value }` (unknown fields dropped), or undefined after reporting each
 * problem (the issues a zod object of an enum and a string with these messages reports; each
 * ends the checks of the node it is reported to, as a zod object's type issues do).
 */
export function checkContent(v: unknown, ctx: RuleCtx): Content | undefined {
  if (!isObject(v)) {
    const message = v === undefined ? {} : { message: 'content items must be objects' };
    ctx.addIssue({
      code: z.ZodIssueCode.invalid_type,
      expected: z.ZodParsedType.object,
      received: z.getParsedType(v),
      fatal: true,
      ...message,
    });
    return undefined;
  }
  const { type, value } = v;
  let valid = true;
  if (typeof type !== 'string') {
    at(ctx, 'type').addIssue({
      code: z.ZodIssueCode.invalid_type,
      expected: CONTENT_TYPES.map((t) => `'${t}'`).join(' | ') as z.ZodParsedType,
      received: z.getParsedType(type),
      message: CONTENT_TYPE_MESSAGE,
      fatal: true,
    });
    valid = false;
  } else if (!CONTENT_TYPES.includes(type as ContentType)) {
    at(ctx, 'type').addIssue({
      code: z.ZodIssueCode.invalid_enum_value,
      received: type,
      options: [...CONTENT_TYPES],
      message: CONTENT_TYPE_MESSAGE,
      fatal: true,
    });
    valid = false;
  }
  if (typeof value !== 'string') {
    at(ctx, 'value').addIssue({
      code: z.ZodIssueCode.invalid_type,
      expected: z.ZodParsedType.string,
      received: z.getParsedType(value),
      message: value === undefined ? 'content value is required' : 'content value must be a string',
      fatal: true,
    });
    valid = false;
  }
  return valid ? { type: type as ContentType, value: value as string } : undefined;
}

/** A content item. */
export const ContentSchema = rule(
  z.object({ type: z.enum(CONTENT_TYPES), value: z.string() }),
  (v, ctx): Content => checkContent(v, ctx) ?? z.NEVER,
);

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
