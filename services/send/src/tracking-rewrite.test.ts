import { isTrackableUrl, pixelTag, rewriteHtml, rewriteText } from './tracking-rewrite';

const wrapped: string[] = [];
const clickUrl = (url: string) => {
  wrapped.push(url);
  return `https://t.example/c/${wrapped.length}`;
};

beforeEach(() => {
  wrapped.length = 0;
});

describe('rewriteHtml', () => {
  it('wraps http(s) links and decodes entities before wrapping', () => {
    const html =
      '<p><a href="https://blog.example/wp-admin/post.php?post=1&amp;action=edit&amp;_wpnonce=ab12" class="x">Edit</a> ' +
      "<A HREF='http://Example.com/a?x=&quot;q&quot;'>b</A> <a href=https://u.example/p&amp;q>c</a></p>";
    const out = rewriteHtml(html, { clickUrl });
    expect(wrapped).toEqual([
      'https://blog.example/wp-admin/post.php?post=1&action=edit&_wpnonce=ab12',
      'http://Example.com/a?x="q"',
      'https://u.example/p&q',
    ]);
    expect(out).toBe(
      '<p><a href="https://t.example/c/1" class="x">Edit</a> <A href="https://t.example/c/2">b</A> <a href="https://t.example/c/3">c</a></p>',
    );
  });

  it('leaves mailto, tel, anchors, relative links, unsubscribe links and opted-out links alone', () => {
    const html = [
      '<a href="mailto:a@example.com">m</a>',
      '<a href="tel:+123">t</a>',
      '<a href="#top">top</a>',
      '<a href="/relative">r</a>',
      '<a href="javascript:void(0)">j</a>',
      '<a href="https://x.example/unsubscribe?u=1">u</a>',
      '<a href="https://x.example/Opt-Out">o</a>',
      '<a clicktracking="off" href="https://x.example/keep">k</a>',
      '<link href="https://x.example/style.css">',
      '<!-- <a href="https://x.example/commented">c</a> -->',
      '<script>var s = \'<a href="https://x.example/in-script">\';</script>',
    ].join('');
    expect(rewriteHtml(html, { clickUrl })).toBe(html);
    expect(wrapped).toEqual([]);
  });

  it('adds the pixel before </body>, or at the end without one', () => {
    expect(rewriteHtml('<html><body><p>x</p></BODY></html>', { pixelUrl: 'https://t.example/o/1' })).toBe(
      `<html><body><p>x</p>${pixelTag('https://t.example/o/1')}</BODY></html>`,
    );
    expect(rewriteHtml('<p>x</p>', { pixelUrl: 'https://t.example/o/1' })).toBe(
      `<p>x</p>${pixelTag('https://t.example/o/1')}`,
    );
    expect(pixelTag('https://t.example/o/1')).toContain('width="1" height="1"');
  });

  it('does both at once and changes nothing when both are off', () => {
    const html = '<body><a href="https://a.example/">a</a></body>';
    expect(rewriteHtml(html, {})).toBe(html);
    const out = rewriteHtml(html, { clickUrl, pixelUrl: 'https://t.example/o/1' });
    expect(out).toBe(
      `<body><a href="https://t.example/c/1">a</a>${pixelTag('https://t.example/o/1')}</body>`,
    );
  });

  it('stays linear on pathological input', () => {
    const big = `${'<a href="https://x.example/?a=1&amp;b=2">'.repeat(20_000)}${'<'.repeat(200_000)}`;
    const out = rewriteHtml(big, { clickUrl: () => 'https://t.example/c/x' });
    expect(out.split('https://t.example/c/x')).toHaveLength(20_001);
  });
});

describe('rewriteText', () => {
  it('wraps URLs, keeping trailing punctuation outside', () => {
    const out = rewriteText(
      'Read https://a.example/x?y=1&z=2. Or (https://b.example/p) or mailto:q@example.com; https://c.example/unsubscribe',
      clickUrl,
    );
    expect(wrapped).toEqual(['https://a.example/x?y=1&z=2', 'https://b.example/p']);
    expect(out).toBe(
      'Read https://t.example/c/1. Or (https://t.example/c/2) or mailto:q@example.com; https://c.example/unsubscribe',
    );
  });
});

describe('isTrackableUrl', () => {
  it('accepts absolute http(s) only', () => {
    expect(isTrackableUrl('https://a.example')).toBe(true);
    expect(isTrackableUrl('HTTP://a.example')).toBe(true);
    for (const u of ['mailto:a@b.c', 'tel:1', '#x', '/x', 'ftp://a', 'https://', 'https://a/unsubscribe'])
      expect(isTrackableUrl(u)).toBe(false);
  });
});
