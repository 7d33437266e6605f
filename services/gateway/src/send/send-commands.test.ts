import { SendEmailMessageSchema, copiesOfCommand } from '@mailyard/contracts';
import { sendCommands } from './accept-send';

const ids = (n: number) => Array.from({ length: n }, (_, i) => `r.${i + 1}`);
const payloads = (n: number, per: number) =>
  sendCommands('t1', 'r', ids(n), per).map((m) => SendEmailMessageSchema.parse(m.envelope.payload));

describe('sendCommands', () => {
  it('chunks the copies of a send, in order, every copy once', () => {
    const cmds = payloads(250, 100);
    expect(cmds.map((c) => copiesOfCommand(c).length)).toEqual([100, 100, 50]);
    expect(cmds.flatMap((c) => copiesOfCommand(c).map((x) => x.copy_id))).toEqual(ids(250));
  });

  it('1 per command writes the single-copy shape older send services read (the rolling-upgrade switch)', () => {
    expect(payloads(3, 1)).toEqual(
      ids(3).map((copy_id) => ({ ref_id: 'r', tenant_id: 't1', copy_id, attempt: 1 })),
    );
  });

  it('a chunk of one copy is single-copy too', () => {
    expect(payloads(101, 100)[1]).toEqual({ ref_id: 'r', tenant_id: 't1', copy_id: 'r.101', attempt: 1 });
  });
});
