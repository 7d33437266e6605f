import { BusMessages, SendEmailMessageSchema, decodeSendEmailMessage } from '@mailyard/contracts';
import { runWithTrace } from '@mailyard/platform';
import { type SendCopies, sendCommands, sendCopies } from './send-commands';

const ids = (ref: string, n: number) => Array.from({ length: n }, (_, i) => `${ref}.${i + 1}`);
const send = (tenantId: string, refId: string, n: number): SendCopies => ({
  tenantId,
  refId,
  copyIds: ids(refId, n),
  traceparent: undefined,
});
const payloads = (n: number, per: number) =>
  sendCommands([send('t1', 'r', n)], per).map((m) => SendEmailMessageSchema.parse(m.envelope.payload));
/** The copies each message commands, as `tenant/copy_id`. */
const copiesOf = (rows: ReturnType<typeof sendCommands>) =>
  rows.map((r) => {
    const d = decodeSendEmailMessage(r.envelope.version, r.envelope.payload);
    if (!d.ok) throw new Error(d.error);
    return d.sends.flatMap((s) => s.copies.map((c) => `${c.tenant_id}/${c.copy_id}`));
  });
/** A payload without its items' traces (random spans). */
const untraced = (p: { sends: Array<{ traceparent?: string }> }) => ({
  ...p,
  sends: p.sends.map(({ traceparent: _, ...item }) => item),
});

describe('sendCommands of one send', () => {
  it('chunks the copies of a send, in order, every copy once', () => {
    const cmds = payloads(250, 100);
    expect(cmds.map((c) => c.sends[0]!.copy_ids.length)).toEqual([100, 100, 50]);
    expect(cmds.flatMap((c) => c.sends.flatMap((s) => s.copy_ids))).toEqual(ids('r', 250));
  });

  it('1 per command writes a group of one copy per message', () => {
    expect(payloads(3, 1).map(untraced)).toEqual(
      ids('r', 3).map((copy_id) => ({
        sends: [{ ref_id: 'r', tenant_id: 't1', copy_ids: [copy_id] }],
        attempt: 1,
      })),
    );
  });

  it('a chunk of one copy is a group of one copy too', () => {
    expect(untraced(payloads(101, 100)[1]!)).toEqual({
      sends: [{ ref_id: 'r', tenant_id: 't1', copy_ids: ['r.101'] }],
      attempt: 1,
    });
  });
});

describe('sendCommands of several sends', () => {
  it('packs the copies of several sends (of several tenants) into messages of at most perCommand copies', () => {
    const sends = [send('t1', 'a', 1), send('t2', 'b', 1), send('t1', 'c', 3), send('t3', 'd', 1)];
    const rows = sendCommands(sends, 4);
    expect(copiesOf(rows)).toEqual([
      ['t1/a.1', 't2/b.1', 't1/c.1', 't1/c.2'],
      ['t1/c.3', 't3/d.1'],
    ]);
    expect(rows.map((r) => r.envelope.version)).toEqual([2, 2]);
    // Several tenants: no envelope tenant (each item names its own).
    expect(rows.map((r) => r.envelope.tenant_id)).toEqual([undefined, undefined]);
    expect(rows.every((r) => r.routingKey === BusMessages.sendEmail.routingKey())).toBe(true);
  });

  it('writes a message of one send as a group of one: a quiet gateway, and perCommand 1', () => {
    const [one] = sendCommands([send('t1', 'a', 2)], 100);
    expect(one!.envelope).toMatchObject({ version: 2, tenant_id: 't1' });
    expect(untraced(one!.envelope.payload as never)).toEqual({
      sends: [{ ref_id: 'a', tenant_id: 't1', copy_ids: ['a.1', 'a.2'] }],
      attempt: 1,
    });
    const singles = sendCommands([send('t1', 'a', 2), send('t2', 'b', 1)], 1);
    expect(
      singles.map((r) => [r.envelope.version, r.envelope.tenant_id, untraced(r.envelope.payload as never)]),
    ).toEqual([
      [2, 't1', { sends: [{ ref_id: 'a', tenant_id: 't1', copy_ids: ['a.1'] }], attempt: 1 }],
      [2, 't1', { sends: [{ ref_id: 'a', tenant_id: 't1', copy_ids: ['a.2'] }], attempt: 1 }],
      [2, 't2', { sends: [{ ref_id: 'b', tenant_id: 't2', copy_ids: ['b.1'] }], attempt: 1 }],
    ]);
  });

  it("one tenant: the envelope names it; every item keeps its own send's trace", () => {
    const traces = [
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      '00-11111111111111111111111111111111-2222222222222222-01',
    ];
    const sends = traces.map((tp, i) =>
      runWithTrace({ traceparent: tp }, () => sendCopies('t1', `r${i}`, [`r${i}.1`])),
    );
    const [row] = sendCommands(sends, 100);
    expect(row!.envelope.tenant_id).toBe('t1');
    const payload = row!.envelope.payload as { sends: Array<{ traceparent: string }> };
    expect(payload.sends.map((s) => s.traceparent.slice(0, 35))).toEqual(traces.map((t) => t.slice(0, 35)));
    // Each item a span of its own: not the request's span itself.
    expect(payload.sends.map((s) => s.traceparent)).not.toEqual(traces);
    expect(row!.envelope.traceparent!.slice(0, 35)).toBe(traces[0]!.slice(0, 35));
  });
});
