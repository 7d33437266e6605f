import { randomBytes } from 'node:crypto';
import {
  Sealer,
  linkTokenKey,
  parseServiceAddress,
  returnPathKey,
  unsubscribeTagValid,
  verifyLinkToken,
} from '@mailyard/platform';
import { buildMessage } from './mime';
import { trackCopy } from './track-copy';

const sealer = new Sealer(randomBytes(32));
const key = linkTokenKey(sealer);
const opts = { baseUrl: 'https://t.example', bounceDomain: 'bounces.mailyard.test', sealer };
const LOG_TO = '01JB8W7Y3K5Q9M2N4P6R8T0V2Z';
const target = {
  tenantId: 'tenant_1',
  refId: '01JREF',
  recipients: [
    { logId: '01JB8W7Y3K5Q9M2N4P6R8T0V1X', email: 'cc@example.com', type: 'cc' },
    { logId: LOG_TO, email: 'ann@example.com', type: 'to' },
  ],
};
const rendered = {
  subject: 'S',
  html: '<body><a href="https://a.example/?x=1&amp;y=2">a</a></body>',
  text: 'See https://a.example/t',
};
const settings = (open: boolean, click: boolean) => ({
  settings: { open_tracking: { enable: open }, click_tracking: { enable: click } },
});

const tokens = (s: string, path: string) =>
  [...s.matchAll(new RegExp(`https://t\\.example/${path}/([A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+)`, 'g'))].map(
    (m) => m[1]!,
  );

describe('trackCopy', () => {
  it('leaves the copy untouched when the send does not enable tracking', () => {
    expect(trackCopy(settings(false, false), rendered, target, opts)).toEqual({ rendered, headers: {} });
    expect(trackCopy({ settings: undefined } as never, rendered, target, opts)).toEqual({
      rendered,
      headers: {},
    });
  });

  it('signs pixel, links and unsubscribe for the first `to` recipient', () => {
    const out = trackCopy(settings(true, true), rendered, target, opts);
    const [pixel] = tokens(out.rendered.html!, 'o');
    const [htmlClick] = tokens(out.rendered.html!, 'c');
    const [textClick] = tokens(out.rendered.text!, 'c');
    const base = { tenantId: 'tenant_1', refId: '01JREF', logId: LOG_TO, email: 'ann@example.com' };
    expect(verifyLinkToken(key, pixel!)).toEqual({ ...base, kind: 'open' });
    expect(verifyLinkToken(key, htmlClick!)).toEqual({
      ...base,
      kind: 'click',
      url: 'https://a.example/?x=1&y=2',
    });
    expect(verifyLinkToken(key, textClick!)).toEqual({ ...base, kind: 'click', url: 'https://a.example/t' });
    const [unsub] = tokens(out.headers['List-Unsubscribe']!, 'u');
    expect(verifyLinkToken(key, unsub!)).toEqual({ ...base, kind: 'unsubscribe' });
    const mailto = new RegExp(
      `^<https://t\\.example/u/${unsub}>, <mailto:(unsubscribe\\+${LOG_TO}\\.[a-z2-7]{16})@bounces\\.mailyard\\.test\\?subject=unsubscribe>$`,
    ).exec(out.headers['List-Unsubscribe']!);
    expect(mailto).not.toBeNull();
    const address = parseServiceAddress(mailto![1]!);
    if (address?.kind !== 'unsubscribe') throw new Error('mailto is not an unsubscribe address');
    expect(address.logId).toBe(LOG_TO);
    expect(unsubscribeTagValid(returnPathKey(sealer), address)).toBe(true);
    expect(out.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
  });

  it('open tracking alone adds the pixel and the unsubscribe headers but keeps the links', () => {
    const out = trackCopy(settings(true, false), rendered, target, opts);
    expect(out.rendered.html).toContain('href="https://a.example/?x=1&amp;y=2"');
    expect(tokens(out.rendered.html!, 'o')).toHaveLength(1);
    expect(out.rendered.text).toBe(rendered.text);
    expect(out.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
  });

  it('its headers replace a custom List-Unsubscribe in the built message', async () => {
    const out = trackCopy(settings(false, true), rendered, target, opts);
    const built = await buildMessage({
      request: {
        from: { email: 'a@sender.example' },
        headers: { 'list-unsubscribe': '<https://mine.example/u>' },
      },
      recipients: [{ email: 'ann@example.com', type: 'to' }],
      rendered: out.rendered,
      copyId: '01JREF.1',
      serviceDomain: 'mailyard.test',
      serviceHeaders: out.headers,
    });
    const head = built.raw
      .toString()
      .split('\r\n\r\n')[0]!
      .replace(/\r\n[ \t]+/g, ' ');
    expect(head).not.toContain('mine.example');
    expect(head).toMatch(/^List-Unsubscribe: <https:\/\/t\.example\/u\//m);
    expect(head).toContain('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
  });
});
