import { ErrorText } from '../errors';
import { CreateTemplateSchema, UpdateTemplateSchema } from './templates';

const template = { name: 'n', subject: 's', content: [{ type: 'text/html', value: '<p>a</p>' }] };

describe('template content', () => {
  it('holds at most one text/plain and one text/html, the same rule as the send payload', () => {
    expect(
      CreateTemplateSchema.safeParse({
        ...template,
        content: [
          { type: 'text/plain', value: 'a' },
          { type: 'text/html', value: '<p>a</p>' },
        ],
      }).success,
    ).toBe(true);
    const twice = [
      { type: 'text/html', value: '<p>a</p>' },
      { type: 'text/html', value: '<p>b</p>' },
    ];
    const created = CreateTemplateSchema.safeParse({ ...template, content: twice });
    expect(created.success).toBe(false);
    expect(created.error?.issues[0]?.message).toBe(ErrorText.contentTypeTwice);
    const updated = UpdateTemplateSchema.safeParse({ template_id: 't', content: twice });
    expect(updated.error?.issues[0]?.message).toBe(ErrorText.contentTypeTwice);
  });
});
