import { oversizeOf, tooLargeError } from './too-large';

const empty = Buffer.alloc(0);

describe('oversizeOf', () => {
  it('is the size the client reported for a message it did not read', () => {
    expect(oversizeOf({ source: empty, oversize: 30_000_000 }, 26_214_400)).toBe(30_000_000);
  });
  it('is the source length when a client read more than the cap (API mailboxes)', () => {
    expect(oversizeOf({ source: Buffer.alloc(1025) }, 1024)).toBe(1025);
  });
  it('is null at the cap and below', () => {
    expect(oversizeOf({ source: Buffer.alloc(1024) }, 1024)).toBeNull();
    expect(oversizeOf({ source: empty, oversize: 1024 }, 1024)).toBeNull();
  });
});

describe('tooLargeError', () => {
  const msg = { id: '42', receivedAt: new Date('2026-03-01T10:00:00.000Z') };
  it('names the message, its size and the limit', () => {
    expect(tooLargeError(msg, 'INBOX', 30_000_000, 26_214_400)).toBe(
      'message too large: 30000000 bytes (limit 26214400); folder INBOX, id 42, received 2026-03-01T10:00:00Z',
    );
  });
  it('says "more than" when only the first cap + 1 bytes were read', () => {
    expect(tooLargeError(msg, 'Sent', 1025, 1024)).toBe(
      'message too large: more than 1024 bytes (limit 1024); folder Sent, id 42, received 2026-03-01T10:00:00Z',
    );
  });
});
