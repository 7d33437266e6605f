import { digestSecret } from '@mailyard/platform';
import { keyCacheName } from './api-key-auth';

describe('keyCacheName', () => {
  it('is the hex of the stored key digest (digestSecret), never the key', () => {
    for (const key of ['myk_abc', 'myk_é😀', 'x'.repeat(256), '']) {
      expect(keyCacheName(key)).toBe(digestSecret(key).toString('hex'));
      if (key) expect(keyCacheName(key)).not.toContain(key);
    }
  });
});
