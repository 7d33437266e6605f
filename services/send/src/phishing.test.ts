import { baseDomain, checkPhishing } from './phishing';

const html = (body: string) => ({ html: `<html><body>${body}</body></html>` });

describe('checkPhishing', () => {
  it('passes ordinary content', () => {
    expect(
      checkPhishing(
        html(
          '<p>Hi</p><a href="https://www.example.com/a">https://example.com/a</a> <a href="https://shop.example.co.uk/">example.co.uk</a> <a href="https://example.com">Read more</a>',
        ),
        [],
      ),
    ).toBeNull();
    expect(checkPhishing({ text: 'See https://example.com/x' }, [])).toBeNull();
  });

  it('flags link text showing one domain while the href goes to another', () => {
    const v = checkPhishing(
      html('<a href="https://evil.example.net/login">https://www.paypal.com/signin</a>'),
      [],
    );
    expect(v?.rule).toBe('deceptive_link');
    expect(v?.reason).toBe('Link text shows www.paypal.com but the link goes to evil.example.net');
    expect(checkPhishing(html('<a href="http://attacker.io"><b>bank.com</b></a>'), [])?.rule).toBe(
      'deceptive_link',
    );
  });

  it('accepts subdomains and the same registrable domain as the same site', () => {
    expect(
      checkPhishing(html('<a href="https://click.mail.example.com/x">www.example.com</a>'), []),
    ).toBeNull();
    expect(baseDomain('a.b.example.co.uk')).toBe('example.co.uk');
    expect(baseDomain('a.b.example.com')).toBe('example.com');
  });

  it('flags IP-literal link hosts (v4, v6, and numeric forms)', () => {
    expect(checkPhishing(html('<a href="http://192.0.2.7/login">Log in</a>'), [])?.rule).toBe('ip_link');
    expect(checkPhishing(html('<a href="http://[2001:db8::1]/">here</a>'), [])?.rule).toBe('ip_link');
    expect(checkPhishing(html('<a href="http://3221225991/">here</a>'), [])?.reason).toContain('192.0.2.7');
    expect(checkPhishing({ text: 'Verify at http://203.0.113.9/verify now' }, [])?.rule).toBe('ip_link');
  });

  it('flags punycode look-alike hosts but not ordinary IDNs', () => {
    // "pаypal.com" with a Cyrillic а (mixed script)
    expect(checkPhishing(html('<a href="https://xn--pypal-4ve.com/">Pay</a>'), [])?.rule).toBe(
      'punycode_lookalike',
    );
    // "аррӏе.com": only Cyrillic letters that look like Latin ones
    expect(checkPhishing(html('<a href="https://xn--80ak6aa92e.com/">Apple</a>'), [])?.rule).toBe(
      'punycode_lookalike',
    );
    // Unicode href: the URL parser converts it to punycode first
    expect(checkPhishing(html('<a href="https://раураl.com/">x</a>'), [])?.rule).toBe('punycode_lookalike');
    expect(checkPhishing(html('<a href="https://xn--mnchen-3ya.de/">München</a>'), [])).toBeNull();
  });

  it('flags forms that ask for a password', () => {
    const v = checkPhishing(
      html('<form action="https://example.com/s"><input name="u"><input type="Password" name="p"></form>'),
      [],
    );
    expect(v).toEqual({
      rule: 'credential_form',
      reason: 'Form asks for a password (credential harvesting)',
    });
    expect(
      checkPhishing(html('<form action="https://example.com/s"><input type="email"></form>'), []),
    ).toBeNull();
  });

  it('flags blocklisted domains and their subdomains, in html and text', () => {
    const list = ['bad.example'];
    expect(checkPhishing(html('<a href="https://login.bad.example/">x</a>'), list)).toEqual({
      rule: 'blocklisted_domain',
      reason: 'Link to a blocklisted domain (login.bad.example)',
    });
    expect(checkPhishing({ text: 'go to https://bad.example/x' }, list)?.rule).toBe('blocklisted_domain');
    expect(checkPhishing(html('<form action="https://bad.example/collect"></form>'), list)?.rule).toBe(
      'blocklisted_domain',
    );
    expect(checkPhishing(html('<a href="https://notbad.example/">x</a>'), list)).toBeNull();
  });

  it('checks every URL-carrying attribute, trimmed, and protocol-relative links', () => {
    const list = ['bad.example'];
    for (const body of [
      '<map><area href=" https://bad.example/x "></map>',
      '<form><button formaction="https://bad.example/b">Go</button></form>',
      '<form><input type="submit" formaction="https://bad.example/i"></form>',
      '<form action=" https://bad.example/f "></form>',
      '<a href="//bad.example/p">x</a>',
    ]) {
      expect(checkPhishing(html(body), list)?.rule).toBe('blocklisted_domain');
    }
    // relative links, other schemes and anchors without href carry no host
    expect(
      checkPhishing(
        html('<a href="/path">x</a><a href="mailto:a@bad.example">m</a><a>bad.example</a><form></form>'),
        list,
      ),
    ).toBeNull();
    expect(checkPhishing({ html: '', text: '' }, list)).toBeNull();
  });

  it('flags a password field whatever its case or spacing, and only a password field', () => {
    expect(checkPhishing(html('<input type=" PASSWORD ">'), [])?.rule).toBe('credential_form');
    expect(checkPhishing(html('<button type="password">x</button><input>'), [])).toBeNull();
  });

  it('flags Greek look-alikes; other scripts pass', () => {
    // "αρρ.com" (Greek alpha, rho, rho)
    expect(checkPhishing(html('<a href="https://αρρ.com/">x</a>'), [])?.rule).toBe('punycode_lookalike');
    // Armenian mixed with Latin
    expect(checkPhishing(html('<a href="https://paypաl.com/">x</a>'), [])?.rule).toBe('punycode_lookalike');
    // Japanese and Greek words that do not look Latin
    expect(
      checkPhishing(html('<a href="https://例え.jp/">x</a><a href="https://λθ.gr/">y</a>'), []),
    ).toBeNull();
  });
});

describe('checkPhishing: link text, attributes and scanning (mutation-testing gaps)', () => {
  const EVIL = 'https://evil.example.net/';
  const deceptive = (body: string) => checkPhishing(html(body), [])?.rule === 'deceptive_link';

  // Every character JavaScript's \s matches (besides the ASCII ones) separates words in link text.
  const SPACES = ['\t', '\n', '\v', '\f', '\r', ' ', '\u00a0', '\u1680', '\u2000', '\u2005', '\u200a'];
  const MORE_SPACES = ['\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff'];
  it.each([...SPACES, ...MORE_SPACES].map((s) => [s.codePointAt(0)!.toString(16), s]))(
    'U+%s separates words: "Visit<sp>bank.com" is a sentence, "<sp>bank.com<sp>" an address',
    (_hex, sp) => {
      expect(deceptive(`<a href="${EVIL}">Visit${sp}bank.com</a>`)).toBe(false);
      expect(deceptive(`<a href="${EVIL}">${sp}bank.com${sp}</a>`)).toBe(true);
    },
  );

  it('control characters other than \\t \\n \\v \\f \\r are not spaces: they do not end a word', () => {
    // One word "bank.com\u0001evil.net": it shows evil.net (the host name at its end).
    expect(checkPhishing(html(`<a href="${EVIL}">bank.com\u0001evil.net</a>`), [])?.reason).toBe(
      'Link text shows evil.net but the link goes to evil.example.net',
    );
    expect(deceptive(`<a href="${EVIL}">bank.com\u001fevil.net</a>`)).toBe(true);
  });

  it('letters outside ASCII are part of the address, not spaces', () => {
    const v = checkPhishing(html(`<a href="${EVIL}">bücher.de</a>`), []);
    expect(v?.reason).toBe('Link text shows xn--bcher-kva.de but the link goes to evil.example.net');
    expect(deceptive(`<a href="${EVIL}">Ωmega.gr</a>`)).toBe(true);
  });

  it('a text node of spaces only after the address does not make it a sentence', () => {
    expect(deceptive(`<a href="${EVIL}">bank.com<b> </b></a>`)).toBe(true);
    expect(deceptive(`<a href="${EVIL}">bank.com<b> </b>now</a>`)).toBe(false);
  });

  it('the anchor ends at </a>, not at another closing tag; an unclosed one at the end of the html', () => {
    expect(deceptive(`<a href="${EVIL}">bank.com</a> and more words`)).toBe(true);
    expect(deceptive(`<a href="${EVIL}"><b>bank</b>.com</a>`)).toBe(true);
    expect(deceptive(`<p><a href="${EVIL}">bank.com`)).toBe(true);
  });

  it('entities in link text are decoded: "bank&#46;com" shows bank.com', () => {
    expect(deceptive(`<a href="${EVIL}">bank&#46;com</a>`)).toBe(true);
    expect(deceptive(`<a href="${EVIL}">Visit&nbsp;bank.com</a>`)).toBe(false);
  });

  it('an <area> carries a link but no text: what follows it is not its text', () => {
    expect(checkPhishing(html(`<map><area href="${EVIL}" alt="x">bank.com</map>`), [])).toBeNull();
  });

  it('decodes entities in attribute values; the first of two equal attributes counts (HTML)', () => {
    expect(checkPhishing(html('<a href="http&#58;//192.0.2.7/">x</a>'), [])?.rule).toBe('ip_link');
    expect(
      checkPhishing(html('<a href="http://192.0.2.7/" href="https://example.com/">x</a>'), [])?.rule,
    ).toBe('ip_link');
    expect(
      checkPhishing(html('<a href="https://example.com/" href="http://192.0.2.7/">x</a>'), []),
    ).toBeNull();
  });

  it('formaction counts only on button and input; http(s) only', () => {
    expect(checkPhishing(html('<div formaction="http://192.0.2.7/">x</div>'), [])).toBeNull();
    expect(checkPhishing(html('<a href="ftp://192.0.2.7/file">f</a>'), [])).toBeNull();
  });

  it('a relative href has no site to compare with: no verdict', () => {
    expect(checkPhishing(html('<a href="/login">bank.com</a>'), [])).toBeNull();
  });

  it('the first match of a rule is the one reported', () => {
    expect(
      checkPhishing(html('<a href="http://192.0.2.7/">a</a><a href="http://198.51.100.1/">b</a>'), [])
        ?.reason,
    ).toBe('Link to an IP address instead of a domain name (192.0.2.7)');
  });

  it('a link text cut at LINK_TEXT_MAX does not show the domain its cut end looks like', () => {
    const text = `${'-'.repeat(1016)}bank.com` + 'munity';
    expect(checkPhishing(html(`<a href="${EVIL}">${text}</a>`), [])).toBeNull();
  });

  it('registrable domain: three labels under a two-letter TLD only with a generic second level', () => {
    expect(baseDomain('www.example.de')).toBe('example.de');
    expect(baseDomain('mail.example.com.au')).toBe('example.com.au');
    expect(baseDomain('example.de')).toBe('example.de');
    // neither host is a subdomain of the other, but the site is the same
    expect(deceptive('<a href="https://click.example.de/x">www.example.de</a>')).toBe(false);
  });

  it('look-alikes: the reason names both forms; digits and hyphens do not hide a whole-script label', () => {
    expect(checkPhishing(html('<a href="https://xn--80ak6aa92e.com/">Apple</a>'), [])?.reason).toBe(
      'Link to a look-alike internationalized domain (xn--80ak6aa92e.com = аррӏе.com)',
    );
    expect(checkPhishing(html('<a href="https://аррӏе-1.com/">x</a>'), [])?.rule).toBe('punycode_lookalike');
  });

  it('ordinary IDNs pass: a Russian word (some letters look Latin, not all), Latin mixed with Han', () => {
    expect(checkPhishing(html('<a href="https://пример.рф/">x</a>'), [])).toBeNull();
    expect(checkPhishing(html('<a href="https://shop中国.com/">x</a>'), [])).toBeNull();
  });
});

describe('checkPhishing: slices and budgets', () => {
  const padding = '<p>x</p>'.repeat(10_000); // 80 000 characters: more than one slice
  /** A clock that advances `step` ms every time it is read. */
  const ticking = (step: number) => {
    let t = 0;
    return () => {
      t += step;
      return t;
    };
  };

  it('every slice of html is read once: one link counts once against maxLinks', () => {
    const body = `<a href="https://example.com/">Read</a>${padding}`;
    expect(checkPhishing(html(body), { blocklist: [], maxLinks: 1 })).toBeNull();
  });

  it('every slice of text is read once', () => {
    const text = `https://example.com/ ${' '.repeat(70_000)}end`;
    expect(checkPhishing({ text }, { blocklist: [], maxLinks: 1 })).toBeNull();
  });

  it('a given budget is the one applied, and the scan stops when it is spent', () => {
    const body = `${padding}<a href="http://192.0.2.7/">x</a>`;
    const v = checkPhishing(html(body), { blocklist: [], budgetMs: 50, now: ticking(100) });
    expect(v).toEqual({
      rule: 'too_complex',
      reason: 'Content could not be checked for phishing: the check exceeded its 50 ms budget',
    });
  });

  it('without an injected clock the real one measures the budget', () => {
    expect(checkPhishing(html(padding), { blocklist: [], budgetMs: 0 })?.rule).toBe('too_complex');
  });
});
