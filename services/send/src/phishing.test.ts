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
