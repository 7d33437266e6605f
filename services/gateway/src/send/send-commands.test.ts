import {
  BusMessages,
  SendEmailMessageSchema,
  copiesOfCommand,
  decodeSendEmailMessage,
} from '@mailyard/contracts';
import { runWithTrace } from '@mailyard/platform';
import { type SendCopies, groupedSendCommands, sendCommands, sendCopies } from './send-commands';

const ids = (ref: string, n: number) => Array.from({ length: n }, (_, i) => `${ref}.${i + 1}`);
const send = (tenantId: string, refId: string, n: number): SendCopies => ({
  tenantId,
  refId,
  copyIds: ids(refId, n),
  traceparent: undefined,
});
const payloads = (n: number, per: number) =>
  sendCommands(send('t1', 'r', n), per).map((m) => SendEmailMessageSchema.parse(m.envelope.payload));
/** The copies each message commands, as `tenant/copy_id`. */
const copiesOf = (rows: ReturnType<typeof groupedSendCommands>) =>
  rows.map((r) => {
    const d = decodeSendEmailMessage(r.envelope.version, r.envelope.payload);
    if (!d.ok) throw new Error(d.error);
    return d.sends.flatMap((s) => s.copies.map((c) => `${c.tenant_id}/${c.copy_id}`));
  });

describe('sendCommands', () => {
  it('chunks the copies of a send, in order, every copy once', () => {
    const cmds = payloads(250, 100);
    expect(cmds.map((c) => copiesOfCommand(c).length)).toEqual([100, 100, 50]);
    expect(cmds.flatMap((c) => copiesOfCommand(c).map((x) => x.copy_id))).toEqual(ids('r', 250));
  });

  it('1 per command writes the single-copy shape older send services read (the rolling-upgrade switch)', () => {
    expect(payloads(3, 1)).toEqual(
      ids('r', 3).map((copy_id) => ({ ref_id: 'r', tenant_id: 't1', copy_id, attempt: 1 })),
    );
  });

  it('a chunk of one copy is single-copy too', () => {
    expect(payloads(101, 100)[1]).toEqual({ ref_id: 'r', tenant_id: 't1', copy_id: 'r.101', attempt: 1 });
  });
});

describe('groupedSendCommands', () => {
  it('packs the copies of several sends (of several tenants) into messages of at most perCommand copies', () => {
    const sends = [send('t1', 'a', 1), send('t2', 'b', 1), send('t1', 'c', 3), send('t3', 'd', 1)];
    const rows = groupedSendCommands(sends, 4);
    expect(copiesOf(rows)).toEqual([
      ['t1/a.1', 't2/b.1', 't1/c.1', 't1/c.2'],
      ['t1/c.3', 't3/d.1'],
    ]);
    expect(rows.map((r) => r.envelope.version)).toEqual([2, 2]);
    // Several tenants: no envelope tenant (each item names its own).
    expect(rows.map((r) => r.envelope.tenant_id)).toEqual([undefined, undefined]);
    expect(rows.every((r) => r.routingKey === BusMessages.sendEmail.routingKey())).toBe(true);
  });

  it('writes the version-1 shapes for a message of one send: a quiet gateway, and perCommand 1', () => {
    const [one] = groupedSendCommands([send('t1', 'a', 2)], 100);
    expect(one!.envelope).toMatchObject({
      version: 1,
      tenant_id: 't1',
      payload: { ref_id: 'a', tenant_id: 't1', copy_ids: ['a.1', 'a.2'], attempt: 1 },
    });
    const singles = groupedSendCommands([send('t1', 'a', 2), send('t2', 'b', 1)], 1);
    expect(singles.map((r) => [r.envelope.version, r.envelope.payload])).toEqual([
      [1, { ref_id: 'a', tenant_id: 't1', copy_id: 'a.1', attempt: 1 }],
      [1, { ref_id: 'a', tenant_id: 't1', copy_id: 'a.2', attempt: 1 }],
      [1, { ref_id: 'b', tenant_id: 't2', copy_id: 'b.1', attempt: 1 }],
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
    const [row] = groupedSendCommands(sends, 100);
    expect(row!.envelope.tenant_id).toBe('t1');
    const payload = row!.envelope.payload as { sends: Array<{ traceparent: string }> };
    expect(payload.sends.map((s) => s.traceparent.slice(0, 35))).toEqual(traces.map((t) => t.slice(0, 35)));
    // Each item a span of its own: not the request's span itself.
    expect(payload.sends.map((s) => s.traceparent)).not.toEqual(traces);
    expect(row!.envelope.traceparent!.slice(0, 35)).toBe(traces[0]!.slice(0, 35));
  });
});
