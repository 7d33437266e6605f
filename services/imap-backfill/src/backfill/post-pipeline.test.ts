import type { RawMessage } from '../mailbox/mailbox-client';
import { PostPipeline } from './post-pipeline';

const msg = (uid: number, bytes?: number): RawMessage => ({
  id: String(uid),
  receivedAt: new Date(0),
  source: bytes ? Buffer.alloc(bytes, 'm') : Buffer.from(`m${uid}`),
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

  it('holds at most `inFlightBytes` of sources until their confirms; a larger message goes alone', async () => {
    const b = broker();
    const p = new PostPipeline({
      inFlight: 16,
      inFlightBytes: 1000,
      checkpointEvery: 100,
      build: async (m) => ({ uid: Number(m.id) }),
      post: b.post,
      save: async () => true,
    });
    const settle = () => new Promise((r) => setImmediate(r));
    for (const uid of [1, 2, 3]) await p.add(msg(uid, 300));
    expect(p.heldBytes).toBe(900);
    let taken = false;
    const fourth = p.add(msg(4, 300)).then(() => {
      taken = true;
    });
    await settle();
    expect(taken).toBe(false); // 1,200 bytes would be over the budget
    b.confirms.get(1)!.resolve();
    await fourth;
    expect(p.heldBytes).toBe(900);

    let big = false;
    const large = p.add(msg(5, 5000)).then(() => {
      big = true;
    });
    for (const uid of [2, 3]) b.confirms.get(uid)!.resolve();
    await settle();
    expect(big).toBe(false); // waits until nothing else is held
    b.confirms.get(4)!.resolve();
    await large;
    expect(p.heldBytes).toBe(5000);
    const draining = p.drain();
    await settle();
    b.confirms.get(5)!.resolve();
    await draining;
    expect(p.heldBytes).toBe(0);
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
