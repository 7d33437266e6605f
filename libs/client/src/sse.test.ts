import { SseParser } from './sse';

describe('SseParser', () => {
  it('parses events split across chunks at any point, with CRLF, CR and LF', () => {
    const text =
      'retry: 3000\r\n: connected\r\n\r\nid: a.0\nevent: MAIL_DELIVERED\ndata: {"x":1}\n\nid: a.1\revent: MAIL_BOUNCE\rdata: one\rdata: two\r\r';
    for (let cut = 0; cut <= text.length; cut++) {
      const p = new SseParser();
      const events = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut))];
      expect(events).toEqual([
        { id: 'a.0', event: 'MAIL_DELIVERED', data: '{"x":1}' },
        { id: 'a.1', event: 'MAIL_BOUNCE', data: 'one\ntwo' },
      ]);
      expect(p.retryMs).toBe(3000);
    }
  });

  it('ignores comments and unknown fields, dispatches only events with data, keeps the last id', () => {
    const p = new SseParser();
    expect(p.push(': heartbeat\n\nfoo: bar\nid: 7\n\ndata\n\n')).toEqual([
      { id: '7', event: 'message', data: '' },
    ]);
  });
});
