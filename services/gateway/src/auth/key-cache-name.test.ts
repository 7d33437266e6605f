import { hashApiKey } from '@mailyard/store';
import { keyCacheName } from './api-key-auth';

describe('keyCacheName', () => {
  it('is the hex of the stored key hash (hashApiKey), never the key', () => {
    for (const key of ['myk_abc', 'myk_é😀', 'x'.repeat(256), '']) {
      expect(keyCacheName(key)).toBe(hashApiKey(key).toString('hex'));
      if (key) expect(keyCacheName(key)).not.toContain(key);
    }
  });
});
