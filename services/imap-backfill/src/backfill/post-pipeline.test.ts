import type { RawMessage } from '../mailbox/mailbox-client';
import { PostPipeline } from './post-pipeline';

const msg = (uid: number): RawMessage => ({
  id: String(uid),
  receivedAt: new Date(0),
  source: Buffer.from(`m${uid}`),
});

/** A deferred confirm per post, so the test decides when the broker "confirms". */
function broker() {
  const confirms = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  return {
    confirms,
    post: (body: Record<string, unknown>) =>
      new Promise<void>((resolve, reject) => confirms.set(body.uid as number, { resolve, reject })),
    confirmAll: () => {
      for (const c of confirms.values()) c.resolve();
    },
  };
}

describe('PostPipeline', () => {
  it('records UIDs only after their confirms, in checkpoints of at least the given size, in order', async () => {
    const b = broker();
    const saved: Array<{ uids: string[]; posted: number }> = [];
    const p = new PostPipeline({
      inFlight: 4,
      checkpointEvery: 3,
      build: async (m) => (Number(m.id) === 2 ? null : { uid: Number(m.id) }),
      post: b.post,
      save: async (uids, posted) => {
        saved.push({ uids, posted });
        return true;
      },
    });
    for (const uid of [1, 2, 3]) await p.add(msg(uid));
    await new Promise((r) => setImmediate(r));
    expect(saved).toEqual([]); // uid 1 and 3 are not confirmed yet
    b.confirmAll();
    for (const uid of [4, 5]) await p.add(msg(uid));
    const draining = p.drain();
    await new Promise((r) => setImmediate(r));
    b.confirmAll();
    await draining;
    expect(saved.flatMap((s) => s.uids)).toEqual(['1', '2', '3', '4', '5']);
    expect(saved.reduce((n, s) => n + s.posted, 0)).toBe(4); // uid 2 was handled without a post
    expect(saved[0]!.uids.length).toBeGreaterThanOrEqual(3);
  });

  it('holds at most `inFlight` messages in build at once', async () => {
    let building = 0;
    let most = 0;
    const p = new PostPipeline({
      inFlight: 3,
      checkpointEvery: 100,
      build: async (m) => {
        most = Math.max(most, ++building);
        await new Promise((r) => setTimeout(r, 2));
        building--;
        return { uid: Number(m.id) };
      },
      post: async () => {},
      save: async () => true,
    });
    for (let uid = 1; uid <= 20; uid++) await p.add(msg(uid));
    await p.drain();
    expect(most).toBe(3);
  });

  it('stops when a checkpoint finds the job gone; a failed publish is thrown and never recorded', async () => {
    const gone = new PostPipeline({
      inFlight: 2,
      checkpointEvery: 1,
      build: async (m) => ({ uid: Number(m.id) }),
      post: async () => {},
      save: async () => false,
    });
    await gone.add(msg(1));
    await gone.drain();
    expect(gone.stopped).toBe(true);

    const saved: string[][] = [];
    const failing = new PostPipeline({
      inFlight: 2,
      checkpointEvery: 10,
      build: async (m) => ({ uid: Number(m.id) }),
      post: async (body) => {
        if (body.uid === 2) throw new Error('not confirmed by RabbitMQ');
      },
      save: async (uids) => {
        saved.push(uids);
        return true;
      },
    });
    await failing.add(msg(1));
    await failing.add(msg(2));
    await expect(failing.drain()).rejects.toThrow('not confirmed by RabbitMQ');
    expect(saved).toEqual([]);
  });
});
