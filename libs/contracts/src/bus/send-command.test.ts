import { BusMessages } from './messages';
import { SendEmailCommandSchema, SendEmailMessageSchema, copiesOfCommand } from './send-command';

const base = { ref_id: 'r1', tenant_id: 't1', attempt: 1 };

describe('send.email command shapes', () => {
  it('keeps single-copy commands valid (retries and outbox rows written before copy_ids)', () => {
    const parsed = BusMessages.sendEmail.schema.parse({ ...base, copy_id: 'c1' });
    expect(parsed).toEqual({ ...base, copy_id: 'c1' });
    expect(copiesOfCommand(parsed)).toEqual([{ ...base, copy_id: 'c1' }]);
  });

  it('reads copy_ids as one single-copy command per copy, in order', () => {
    const parsed = SendEmailMessageSchema.parse({ ...base, attempt: 2, copy_ids: ['c1', 'c2', 'c3'] });
    expect(copiesOfCommand(parsed)).toEqual([
      { ...base, attempt: 2, copy_id: 'c1' },
      { ...base, attempt: 2, copy_id: 'c2' },
      { ...base, attempt: 2, copy_id: 'c3' },
    ]);
  });

  it('never reads a payload with a valid copy_ids as its one copy_id', () => {
    const parsed = SendEmailMessageSchema.parse({ ...base, copy_id: 'c1', copy_ids: ['c1', 'c2'] });
    expect(copiesOfCommand(parsed).map((c) => c.copy_id)).toEqual(['c1', 'c2']);
  });

  it('refuses an empty or over-long list, empty copy ids, and a command without copies', () => {
    for (const copy_ids of [[], [''], Array.from({ length: 1_001 }, (_, i) => `c${i}`)])
      expect(SendEmailMessageSchema.safeParse({ ...base, copy_ids }).success).toBe(false);
    expect(SendEmailMessageSchema.safeParse(base).success).toBe(false);
  });

  it('a multi-copy command is invalid for a reader of the single-copy shape only (older send services)', () => {
    expect(SendEmailCommandSchema.safeParse({ ...base, copy_ids: ['c1', 'c2'] }).success).toBe(false);
  });
});
