import { patchSharedBuffers } from './pglite-wasm';

const wasmBytes = (...parts: string[]) => Buffer.from(parts.join(''), 'latin1');

describe('patchSharedBuffers', () => {
  it('replaces the one NUL-terminated setting in place, NUL-padded to the same length', () => {
    const bytes = wasmBytes('\0temp_buffers=8MB\0shared_buffers=128MB\0wal_buffers=4MB\0');
    const before = bytes.length;
    expect(patchSharedBuffers(bytes, '16MB')).toBe(true);
    expect(bytes.length).toBe(before);
    expect(bytes.toString('latin1')).toBe('\0temp_buffers=8MB\0shared_buffers=16MB\0\0wal_buffers=4MB\0');
  });

  it('leaves the module alone when the setting is missing, repeated or only a prefix', () => {
    for (const text of [
      '\0shared_buffers=256MB\0',
      '\0shared_buffers=128MB\0x\0shared_buffers=128MB\0',
      'xshared_buffers=128MB\0',
      '\0shared_buffers=128MBx\0',
    ]) {
      const bytes = wasmBytes(text);
      expect(patchSharedBuffers(bytes, '16MB')).toBe(false);
      expect(bytes.toString('latin1')).toBe(text);
    }
  });

  it('refuses a value longer than the one it replaces', () => {
    const bytes = wasmBytes('\0shared_buffers=128MB\0');
    expect(patchSharedBuffers(bytes, '1024MB')).toBe(false);
    expect(bytes.toString('latin1')).toBe('\0shared_buffers=128MB\0');
  });
});
