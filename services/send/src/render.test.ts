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
    const template = '{{x}}'.repeat(1_000_000);
    const vars = { x: 'y'.repeat(400) };
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
