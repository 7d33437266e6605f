import { stripAngles } from './original-message';

describe('stripAngles', () => {
  test.each([
    ['<a@b.example>', 'a@b.example'],
    ['Name <a@b.example>', 'a@b.example'],
    ['<>', ''],
    ['a@b.example', 'a@b.example'],
    ['  "Name" a@b.example (comment)', 'a@b.example'],
    ['rfc822;a@b.example', 'a@b.example'],
    ['first@x.example, second@y.example', 'first@x.example'],
    ['x@@y', 'x@@y'],
    ['@@y', '@@y'],
    ['@b.example', ''],
    ['a@', ''],
    ['a @ b', ''],
    ['no address here', ''],
    [`${'a'.repeat(100_000)} b@c.example`, 'b@c.example'],
    ['a'.repeat(100_000), ''],
  ])('%s -> %s', (value, address) => {
    expect(stripAngles(value)).toBe(address);
  });
});
