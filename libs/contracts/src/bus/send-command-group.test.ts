import { BusMessages } from './messages';
import { MAX_COPIES_PER_COMMAND, SendEmailCommandSchema, SendEmailMessageSchema } from './send-command';
import { SEND_EMAIL_GROUP_VERSION, SendEmailGroupSchema, decodeSendEmailMessage } from './send-command-group';

const wire = (v: unknown) => JSON.parse(JSON.stringify(v));
const group = {
  sends: [
    { tenant_id: 't1', ref_id: 'r1', copy_ids: ['r1.1', 'r1.2'], traceparent: 'tp1' },
    { tenant_id: 't2', ref_id: 'r2', copy_ids: ['r2.1'] },
  ],
  attempt: 1,
};

describe('send.email version 2 (groups of sends)', () => {
  it('decodes every copy of every send under its own tenant and trace, in order', () => {
    expect(decodeSendEmailMessage(SEND_EMAIL_GROUP_VERSION, wire(group))).toEqual({
      ok: true,
      sends: [
        {
          tenantId: 't1',
          traceparent: 'tp1',
          copies: [
            { ref_id: 'r1', tenant_id: 't1', copy_id: 'r1.1', attempt: 1 },
            { ref_id: 'r1', tenant_id: 't1', copy_id: 'r1.2', attempt: 1 },
          ],
        },
        { tenantId: 't2', copies: [{ ref_id: 'r2', tenant_id: 't2', copy_id: 'r2.1', attempt: 1 }] },
      ],
    });
  });

  it('decodes version 1 in both shapes as one send with the envelope trace', () => {
    const one = { ref_id: 'r', tenant_id: 't', copy_id: 'r.1', attempt: 3 };
    expect(decodeSendEmailMessage(1, one)).toEqual({ ok: true, sends: [{ tenantId: 't', copies: [one] }] });
    const many = decodeSendEmailMessage(1, { ref_id: 'r', tenant_id: 't', copy_ids: ['a', 'b'], attempt: 1 });
    expect(many.ok && many.sends[0]!.copies.map((c) => c.copy_id)).toEqual(['a', 'b']);
  });

  it('refuses each shape under the other version, empty and over-long groups, and unknown versions', () => {
    const error = (v: number, p: unknown) => {
      const d = decodeSendEmailMessage(v, wire(p));
      return d.ok ? 'accepted' : d.error;
    };
    expect(error(1, group)).not.toBe('accepted');
    expect(error(2, { ref_id: 'r', tenant_id: 't', copy_id: 'r.1', attempt: 1 })).not.toBe('accepted');
    expect(error(2, { sends: [], attempt: 1 })).toMatch(/at least 1/);
    const items = Array.from({ length: 11 }, (_, i) => ({
      tenant_id: 't',
      ref_id: `r${i}`,
      copy_ids: Array.from({ length: 100 }, (_, k) => `r${i}.${k}`),
    }));
    expect(error(2, { sends: items, attempt: 1 })).toMatch(`at most ${MAX_COPIES_PER_COMMAND} copies`);
    expect(error(2, { sends: [{ ...group.sends[0], tenant_id: '' }], attempt: 1 })).not.toBe('accepted');
    expect(error(3, group)).toBe('unknown send.email version 3');
  });

  it('is invalid for readers of version 1 only (send services older than groups park it)', () => {
    expect(SendEmailMessageSchema.safeParse(group).success).toBe(false);
    expect(SendEmailCommandSchema.safeParse(group).success).toBe(false);
    expect(BusMessages.sendEmail.schema.safeParse(group).success).toBe(false);
    expect(BusMessages.sendEmailGroup.schema.parse(group)).toEqual(SendEmailGroupSchema.parse(group));
  });
});
