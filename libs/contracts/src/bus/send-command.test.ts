import { BusMessages } from './messages';
import {
  MAX_COPIES_PER_COMMAND,
  SEND_EMAIL_COMMAND_VERSION,
  SendEmailMessageSchema,
  commandOfOneCopy,
  decodeSendEmailMessage,
} from './send-command';

const wire = (v: unknown) => JSON.parse(JSON.stringify(v));
const group = {
  sends: [
    { tenant_id: 't1', ref_id: 'r1', copy_ids: ['r1.1', 'r1.2'], traceparent: 'tp1' },
    { tenant_id: 't2', ref_id: 'r2', copy_ids: ['r2.1'] },
  ],
  attempt: 1,
};
const error = (v: number, p: unknown) => {
  const d = decodeSendEmailMessage(v, wire(p));
  return d.ok ? 'accepted' : d.error;
};

describe('send.email messages', () => {
  it('decodes every copy of every send under its own tenant and trace, in order', () => {
    expect(decodeSendEmailMessage(SEND_EMAIL_COMMAND_VERSION, wire(group))).toEqual({
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

  it('commands one copy (a retry, a recovered copy) as a group of one send', () => {
    const one = { ref_id: 'r', tenant_id: 't', copy_id: 'r.1', attempt: 3 };
    const message = commandOfOneCopy(one, 'tp');
    expect(message).toEqual({
      sends: [{ tenant_id: 't', ref_id: 'r', copy_ids: ['r.1'], traceparent: 'tp' }],
      attempt: 3,
    });
    expect(BusMessages.sendEmail.schema.parse(message)).toEqual(message);
    expect(decodeSendEmailMessage(SEND_EMAIL_COMMAND_VERSION, wire(commandOfOneCopy(one)))).toEqual({
      ok: true,
      sends: [{ tenantId: 't', copies: [one] }],
    });
  });

  it("upgrades the previous release's version 1 (both shapes) to one send in the envelope trace", () => {
    const one = { ref_id: 'r', tenant_id: 't', copy_id: 'r.1', attempt: 3 };
    expect(decodeSendEmailMessage(1, one)).toEqual({ ok: true, sends: [{ tenantId: 't', copies: [one] }] });
    const many = decodeSendEmailMessage(1, { ref_id: 'r', tenant_id: 't', copy_ids: ['a', 'b'], attempt: 1 });
    expect(many.ok && many.sends[0]!.copies.map((c) => c.copy_id)).toEqual(['a', 'b']);
    // A payload with a copy list is never read as its one copy_id.
    const both = decodeSendEmailMessage(1, {
      ref_id: 'r',
      tenant_id: 't',
      copy_id: 'a',
      copy_ids: ['a', 'b'],
      attempt: 1,
    });
    expect(both.ok && both.sends[0]!.copies.map((c) => c.copy_id)).toEqual(['a', 'b']);
    for (const bad of [
      { ref_id: 'r', tenant_id: 't', attempt: 1 },
      { ...one, tenant_id: '' },
      { ...one, copy_ids: [] },
      null,
      'x',
    ])
      expect(error(1, bad)).not.toBe('accepted');
    expect(error(1, group)).not.toBe('accepted');
  });

  it('refuses the old shape under version 2, empty and over-long messages, and unknown versions', () => {
    expect(error(2, { ref_id: 'r', tenant_id: 't', copy_id: 'r.1', attempt: 1 })).not.toBe('accepted');
    expect(error(2, { sends: [], attempt: 1 })).toMatch(/at least 1/);
    const items = Array.from({ length: 11 }, (_, i) => ({
      tenant_id: 't',
      ref_id: `r${i}`,
      copy_ids: Array.from({ length: 100 }, (_, k) => `r${i}.${k}`),
    }));
    expect(error(2, { sends: items, attempt: 1 })).toMatch(`at most ${MAX_COPIES_PER_COMMAND} copies`);
    expect(error(2, { sends: [{ ...group.sends[0], tenant_id: '' }], attempt: 1 })).not.toBe('accepted');
    expect(error(2, { sends: [{ ...group.sends[0], copy_ids: [''] }], attempt: 1 })).not.toBe('accepted');
    expect(error(2, { ...group, attempt: 0 })).not.toBe('accepted');
    expect(error(3, group)).toBe('unknown send.email version 3');
    expect(SendEmailMessageSchema.parse(group)).toEqual(group);
  });
});
