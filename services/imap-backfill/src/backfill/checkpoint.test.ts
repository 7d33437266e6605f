import { readCheckpoint, writeCheckpoint } from './checkpoint';

const base = { lower: '2026-01-01T00:00:00.000Z', until: '2026-02-01T00:00:00.000Z', started: true, step: 3 };

describe('job checkpoints', () => {
  it('IMAP UIDs are stored as a UID set and read back', () => {
    const stored = writeCheckpoint({
      ...base,
      folders: { inbox: { uidValidity: '7', delivered: new Set(['1', '2', '3', '9']) } },
    });
    expect(stored.folders).toEqual({ inbox: { uidValidity: '7', done: '1:3,9' } });
    const back = readCheckpoint(JSON.parse(JSON.stringify(stored)));
    expect(back).toMatchObject(base);
    expect([...back.folders.inbox!.delivered].sort()).toEqual(['1', '2', '3', '9']);
  });

  it('provider ids (Gmail hex, Graph opaque) are stored as a list and read back as they were', () => {
    const gmail = ['00000018c0000001', '00000018c000000a'];
    const graph = ['AAkALgAAAAAAHYQDEapmEc2byACqAC-EWg0AKLBNg8IOyEyIjmbd5aOu6QAAAf7WzAAA='];
    const stored = writeCheckpoint({
      ...base,
      folders: {
        inbox: { uidValidity: 'gmail', delivered: new Set(gmail) },
        sent: { uidValidity: 'graph', delivered: new Set(graph) },
      },
    });
    expect(stored.folders).toEqual({
      inbox: { uidValidity: 'gmail', ids: gmail },
      sent: { uidValidity: 'graph', ids: graph },
    });
    const back = readCheckpoint(JSON.parse(JSON.stringify(stored)));
    expect([...back.folders.inbox!.delivered]).toEqual(gmail);
    expect([...back.folders.sent!.delivered]).toEqual(graph);
  });

  it('reads the earlier layout (delivered: number[]) and ignores what it cannot read', () => {
    const back = readCheckpoint({
      folders: {
        inbox: { uidValidity: '5', delivered: [4, 5, 'x'] },
        sent: { done: '1:2' },
        spam: { uidValidity: 'gmail', ids: ['a', 3] },
      },
      started: 'yes',
    });
    expect([...back.folders.inbox!.delivered]).toEqual(['4', '5']);
    expect(back.folders.sent).toBeUndefined();
    expect([...back.folders.spam!.delivered]).toEqual(['a']);
    expect(back).toMatchObject({ lower: null, until: null, started: false, step: 0 });
  });
});
