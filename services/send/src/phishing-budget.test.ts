/**
 * The phishing check on hostile content: inputs that made the old scan quadratic (one long link
 * text, thousands of nested anchors, deep unclosed elements) give their verdicts at once, and
 * the budget (links, scanning time) ends a scan with a defined verdict. Assertions are on
 * behaviour; the time budget runs on an injected clock.
 */
import { LINK_TEXT_MAX, LinkText, SLICE_CHARS, checkPhishing, checkPhishingAsync } from './phishing';

const KB = 1024;

describe('pathological content', () => {
  it('one 128 KB link text: only the start of the word counts, and a URL at its start still shows', () => {
    const longText = 'a.'.repeat(64 * KB);
    expect(checkPhishing({ html: `<a href="https://evil.example.net/">${longText}</a>` }, [])).toBeNull();
    const longUrl = `https://www.paypal.com/${'x'.repeat(128 * KB)}`;
    expect(checkPhishing({ html: `<a href="https://evil.example.net/">${longUrl}</a>` }, [])).toEqual({
      rule: 'deceptive_link',
      reason: 'Link text shows www.paypal.com but the link goes to evil.example.net',
    });
    // A second word anywhere makes it a sentence, however long the first one is.
    expect(
      checkPhishing(
        { html: `<a href="https://evil.example.net/">bank.com${'y'.repeat(128 * KB)} more</a>` },
        [],
      ),
    ).toBeNull();
  });

  it('keeps at most LINK_TEXT_MAX characters of a link text', () => {
    const t = new LinkText();
    const word = 'b'.repeat(10 * LINK_TEXT_MAX);
    t.push(word, 0, word.length);
    t.push(word, 0, word.length);
    expect((t as unknown as { word: string }).word).toHaveLength(LINK_TEXT_MAX);
  });

  it('8,000 nested anchors: each <a> closes the open one, so only the innermost link has the text', () => {
    const nested = '<a href="https://evil.example.net/">'.repeat(8000);
    expect(checkPhishing({ html: `${nested}hello${'</a>'.repeat(8000)}` }, [])).toBeNull();
    // The visible text belongs to the innermost link, which goes where it says.
    expect(
      checkPhishing(
        { html: `${nested}<a href="https://www.bank.com/">www.bank.com</a>${'</a>'.repeat(8000)}` },
        [],
      ),
    ).toBeNull();
    // An <a> start tag ends the open link, which is judged on the text it had so far.
    expect(
      checkPhishing(
        { html: `<a href="https://evil.example.net/">www.bank.com<a href="https://x.example/">y</a>` },
        [],
      )?.rule,
    ).toBe('deceptive_link');
    // ... and the text is judged against the innermost link's href.
    expect(
      checkPhishing(
        { html: `<a href="https://www.bank.com/">${nested}www.bank.com${'</a>'.repeat(8000)}` },
        [],
      )?.rule,
    ).toBe('deceptive_link');
  });

  it('100,000 unclosed elements and stray end tags', () => {
    const html = `${'<div><b>'.repeat(100_000)}${'</i>'.repeat(100_000)}<a href="http://192.0.2.1/">x</a>`;
    expect(checkPhishing({ html }, [])?.rule).toBe('ip_link');
  });

  it('a tag or attribute split across slices is read whole', () => {
    const pad = 'p'.repeat(SLICE_CHARS - 20);
    const html = `${pad}<a href="https://evil.example.net/&amp;x">https://www.paypal.com/</a>`;
    expect(checkPhishing({ html }, [])?.reason).toBe(
      'Link text shows www.paypal.com but the link goes to evil.example.net',
    );
    const text = `${'t '.repeat(SLICE_CHARS / 2 - 3)}https://bad.example/path`;
    expect(checkPhishing({ text }, ['bad.example'])?.rule).toBe('blocklisted_domain');
  });
});

describe('budget', () => {
  const manyLinks = (n: number) =>
    Array.from({ length: n }, (_, i) => `<a href="https://site${i}.example/">Read</a>`).join('');

  it('more links than maxLinks: too_complex', () => {
    expect(checkPhishing({ html: manyLinks(6) }, { blocklist: [], maxLinks: 5 })).toEqual({
      rule: 'too_complex',
      reason: 'Content could not be checked for phishing: more than 5 links',
    });
    expect(checkPhishing({ html: manyLinks(5) }, { blocklist: [], maxLinks: 5 })).toBeNull();
    // URLs in the text body count too.
    const text = Array.from({ length: 6 }, (_, i) => `https://t${i}.example/`).join(' ');
    expect(checkPhishing({ text }, { blocklist: [], maxLinks: 5 })?.rule).toBe('too_complex');
  });

  it('more scanning time than budgetMs: too_complex (clock injected: half a second per reading)', () => {
    let t = 0;
    const now = () => {
      t += 500;
      return t;
    };
    const html = `<p>${'x'.repeat(4 * SLICE_CHARS)}</p>`;
    expect(checkPhishing({ html }, { blocklist: [], budgetMs: 2000, now })).toEqual({
      rule: 'too_complex',
      reason: 'Content could not be checked for phishing: the check exceeded its 2000 ms budget',
    });
    // A small body fits in the same budget.
    t = 0;
    expect(checkPhishing({ html: '<p>hi</p>' }, { blocklist: [], budgetMs: 2000, now })).toBeNull();
  });

  it('a rule that matched before the budget ran out is the verdict', () => {
    const html = `<a href="http://192.0.2.1/">x</a>${manyLinks(10)}`;
    expect(checkPhishing({ html }, { blocklist: [], maxLinks: 5 })?.rule).toBe('ip_link');
  });

  it('stops at a blocklisted link, which outranks every other rule', () => {
    const html = `<a href="https://bad.example/">x</a>${manyLinks(10)}`;
    expect(checkPhishing({ html }, { blocklist: ['bad.example'], maxLinks: 5 })?.rule).toBe(
      'blocklisted_domain',
    );
  });
});

describe('checkPhishingAsync', () => {
  it('gives the same verdicts and lets other work run between slices', async () => {
    const html = `${'<p>filler</p>'.repeat((3 * SLICE_CHARS) / 13)}<a href="https://evil.example.net/">www.bank.com</a>`;
    const order: string[] = [];
    setImmediate(() => order.push('other work'));
    const verdict = await checkPhishingAsync({ html }, { blocklist: [] });
    order.push('verdict');
    expect(verdict).toEqual(checkPhishing({ html }, []));
    expect(verdict?.rule).toBe('deceptive_link');
    expect(order).toEqual(['other work', 'verdict']);
  });

  it('checks a small copy (HTML and text) in one turn, and yields once per slice of a large one', async () => {
    const turnsOf = async (input: { html?: string; text?: string }) => {
      let turns = 0;
      let done = false;
      const tick = () => {
        if (done) return;
        turns++;
        setImmediate(tick);
      };
      setImmediate(tick);
      const verdict = await checkPhishingAsync(input, { blocklist: [] });
      done = true;
      return { turns, verdict };
    };
    const small = {
      html: '<p>Hi <a href="https://shop.example/">shop</a></p>',
      text: 'Hi https://shop.example/',
    };
    expect(await turnsOf(small)).toEqual({ turns: 0, verdict: null });
    const large = { html: `<p>${'x'.repeat(3 * SLICE_CHARS)}</p>`, text: 'plain' };
    const { turns, verdict } = await turnsOf(large);
    expect(verdict).toBeNull();
    expect(turns).toBeGreaterThanOrEqual(3);
  });
});
