import { RenderError, renderCopy, substitute } from './render';

describe('renderCopy', () => {
  const request = {
    subject: 'Hello {{ name }}!',
    content: [
      { type: 'text/html' as const, value: '<p>Hi {{name}}, your code is {{code}}{{missing}}</p>' },
      { type: 'text/plain' as const, value: 'Hi {{name}}, code {{code}}' },
    ],
  };

  it('fills variables, missing ones empty', () => {
    expect(renderCopy(request, { name: 'Ann', code: '42' })).toEqual({
      subject: 'Hello Ann!',
      html: '<p>Hi Ann, your code is 42</p>',
      text: 'Hi Ann, code 42',
    });
    expect(renderCopy(request, {}).subject).toBe('Hello !');
  });

  it('HTML-escapes values in html bodies only, and keeps the subject on one line', () => {
    const r = renderCopy(request, { name: '<b>"Tom" & Jerry\'s</b>\r\nBcc: x@y', code: '1' });
    expect(r.html).toBe(
      '<p>Hi &lt;b&gt;&quot;Tom&quot; &amp; Jerry&#39;s&lt;/b&gt;\r\nBcc: x@y, your code is 1</p>',
    );
    expect(r.text).toBe('Hi <b>"Tom" & Jerry\'s</b>\r\nBcc: x@y, code 1');
    expect(r.subject).toBe('Hello <b>"Tom" & Jerry\'s</b> Bcc: x@y!');
  });

  it('does not read inherited properties as variables', () => {
    expect(substitute('{{constructor}}{{toString}}', {})).toBe('');
  });

  it('fails on a request without content', () => {
    expect(() => renderCopy({ subject: 'x', content: [] }, {})).toThrow(RenderError);
  });
});

describe('rendered size limit', () => {
  it('stops substitution that would grow a copy past the message limit', () => {
    // A 100 KB template repeating a 2 KB value would grow to 40 MB.
    const template = '{{x}}'.repeat(20_000);
    const vars = { x: 'y'.repeat(2000) };
    expect(() =>
      renderCopy({ subject: 's', content: [{ type: 'text/plain', value: template }] }, vars),
    ).toThrow('The rendered message exceeds 30 MB');
  });

  it('renders copies within the limit', () => {
    const out = renderCopy(
      { subject: 's', content: [{ type: 'text/plain', value: '{{x}}'.repeat(1000) }] },
      { x: 'ab' },
    );
    expect(out.text).toHaveLength(2000);
  });
});

describe('variables', () => {
  it('accepts letters, digits, _, - and . in names, with optional spaces inside the braces', () => {
    const vars = { 'first.name': 'Ann', 'a-b': '1', a_b: '2', X9: '3' };
    expect(substitute('{{first.name}} {{a-b}} {{a_b}} {{  X9  }}', vars)).toBe('Ann 1 2 3');
  });

  it('leaves text that is not a variable alone', () => {
    expect(substitute('{{a b}} {x} {{}} {{ a', { a: 'A', x: 'X' })).toBe('{{a b}} {x} {{}} {{ a');
  });

  it('renders null as empty and other values as text', () => {
    const vars = { none: null, n: 7, yes: true } as unknown as Record<string, string>;
    expect(substitute('[{{none}}][{{n}}][{{yes}}]', vars)).toBe('[][7][true]');
  });

  it('turns each run of line breaks in the subject into one space', () => {
    const r = renderCopy(
      { subject: '{{s}}', content: [{ type: 'text/plain', value: 'x' }] },
      { s: 'a\r\n\r\nb\nc\rd' },
    );
    expect(r.subject).toBe('a b c d');
  });
});

describe('requests that cannot be rendered', () => {
  const plain = [{ type: 'text/plain' as const, value: 'x' }];

  it.each([
    [{ content: plain }, 'The send has no subject to render'],
    [{ subject: 's' }, 'The send has no content to render'],
    [{ subject: 's', content: 'x' }, 'The send has no content to render'],
    [{ subject: 's', content: [] }, 'The send has no content to render'],
    [{ subject: 's', content: [{ type: 'text/plain' }] }, 'A content entry has no value'],
    [{ subject: 's', content: [null] }, 'A content entry has no value'],
    [{ subject: 's', content: [{ type: 'text/rtf', value: 'x' }] }, 'Unsupported content type "text/rtf"'],
  ])('%j: %s', (request, message) => {
    expect(() => renderCopy(request as never, {})).toThrow(new RenderError(message));
  });
});

describe('render budget', () => {
  it('counts the template and every substituted value, down to exactly zero', () => {
    const budget = { remaining: 7 };
    expect(substitute('{{x}}', { x: '12' }, { budget: budget })).toBe('12');
    expect(budget.remaining).toBe(0);
    expect(() => substitute('{{x}}', { x: '12' }, { budget: { remaining: 6 } })).toThrow(RenderError);
    expect(() => substitute('abc', {}, { budget: { remaining: 2 } })).toThrow(RenderError);
    expect(substitute('abc', {}, { budget: { remaining: 3 } })).toBe('abc');
  });

  it('counts the encoded value', () => {
    // '&' becomes '&amp;' (5 characters): 5 for the template + 5 for the value.
    expect(() =>
      substitute('{{x}}', { x: '&' }, { encode: (v) => v.replace('&', '&amp;'), budget: { remaining: 9 } }),
    ).toThrow(RenderError);
  });
});
