import MailComposer from 'nodemailer/lib/mail-composer';
import { headerRecipientsFor, routeByHeaders } from './header-recipients';

async function build(o: { to?: string[]; cc?: string[]; extra?: Record<string, string> }): Promise<Buffer> {
  return new MailComposer({
    from: 'owner@example.test',
    ...(o.to ? { to: o.to } : {}),
    ...(o.cc ? { cc: o.cc } : {}),
    subject: 'hello',
    text: 'body',
    headers: o.extra ?? {},
  })
    .compile()
    .build();
}

describe('headerRecipientsFor', () => {
  it('keeps the planned recipients this delivery is for, in plan order', () => {
    const planned = [
      { email: 'a@x.test', type: 'to' as const, name: 'A' },
      { email: 'b@x.test', type: 'to' as const },
      { email: 'c@x.test', type: 'cc' as const },
      { email: 'd@x.test', type: 'bcc' as const },
    ];
    expect(headerRecipientsFor(planned, ['D@x.test', 'a@X.test'])).toEqual([planned[0], planned[3]]);
  });
});

describe('routeByHeaders', () => {
  it('leaves a message alone when its headers name exactly the envelope', async () => {
    const raw = await build({ to: ['Ann <ann@x.test>'], cc: ['bob@x.test'] });
    const r = routeByHeaders(raw, ['ANN@x.test', 'bob@x.test']);
    expect(r).toEqual({ ok: true, raw, bcc: [] });
  });

  it('adds envelope-only recipients as one Bcc header, body untouched', async () => {
    const raw = await build({ to: ['ann@x.test'] });
    const r = routeByHeaders(raw, ['ann@x.test', 'hid@x.test', 'den@y.test']);
    if (!r.ok) throw new Error('refused');
    expect(r.bcc).toEqual(['hid@x.test', 'den@y.test']);
    const text = r.raw.toString();
    expect(text.startsWith('Bcc: hid@x.test,\r\n den@y.test\r\n')).toBe(true);
    expect(text.slice(text.indexOf('\r\n\r\n'))).toBe(
      raw.toString().slice(raw.toString().indexOf('\r\n\r\n')),
    );
  });

  it('builds a Bcc-only message for a copy to a bcc recipient alone', async () => {
    const raw = await build({});
    const r = routeByHeaders(raw, ['hid@x.test']);
    expect(r.ok && r.raw.toString().startsWith('Bcc: hid@x.test\r\n')).toBe(true);
  });

  it('refuses a message whose headers name someone outside the envelope', async () => {
    const raw = await build({ to: ['ann@x.test', 'Bob <bob@x.test>'] });
    expect(routeByHeaders(raw, ['ann@x.test'])).toEqual({ ok: false, outside: ['bob@x.test'] });
  });

  it('compares IDN domains by their ASCII form and reads folded headers', async () => {
    const many = Array.from({ length: 30 }, (_, i) => `person${i}@example.test`);
    const raw = await build({ to: ['user@bücher.example', ...many] });
    expect(raw.toString()).toMatch(/\r\n\s+person/);
    expect(routeByHeaders(raw, ['user@xn--bcher-kva.example', ...many])).toMatchObject({ ok: true, bcc: [] });
  });
});
