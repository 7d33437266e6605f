import { SendRequestSchema, type StoredSendRequest, planCopies } from '@mailyard/contracts';
import { plannedCopy } from './copy-plan';

/** A stored request as the gateway keeps it (validated, subject and content set). */
const request = (n: number): StoredSendRequest =>
  SendRequestSchema.parse({
    from: { email: 'news@example.org' },
    to: Array.from({ length: n }, (_, i) => ({ email: `r${i}@example.com`, name: `R ${i}` })),
    cc: [{ email: 'cc@example.com' }],
    mailer_id: 'dom_x',
    subject: 'Hi {{name}}',
    content: [{ type: 'text/plain', value: 'x' }],
    substitutions: Object.fromEntries(
      Array.from({ length: n }, (_, i) => [`r${i}@example.com`, { name: `R ${i}` }]),
    ),
  }) as StoredSendRequest;

describe('plannedCopy', () => {
  it('gives each copy what planCopies plans for it', () => {
    const req = request(5);
    for (const copy of planCopies(req, 'REF')) expect(plannedCopy(req, 'REF', copy.copy_id)).toEqual(copy);
    expect(plannedCopy(req, 'REF', 'REF.99')).toBeUndefined();
  });

  it('plans a send once: its copies come from one plan, another request gets its own', () => {
    const req = request(100);
    const first = plannedCopy(req, 'REF', 'REF.1');
    expect(plannedCopy(req, 'REF', 'REF.1')).toBe(first);
    const same = request(100);
    expect(plannedCopy(same, 'REF', 'REF.1')).not.toBe(first);
    expect(plannedCopy(same, 'REF', 'REF.1')).toEqual(first);
  });
});
