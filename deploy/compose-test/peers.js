// Test peers for scripts/compose-test.sh, no dependencies: an SMTP sink on 2525 (accepts any
// AUTH PLAIN, records each message) and an HTTP server on 8080 (POST /hook records a webhook;
// GET /received returns {mails, hooks}).
const net = require('node:net');
const http = require('node:http');
const mails = [];
const hooks = [];
net
  .createServer((s) => {
    let buf = '';
    let data = null;
    let rcpt = [];
    s.write('220 peers ESMTP\r\n');
    s.on('data', (chunk) => {
      buf += chunk.toString('latin1');
      for (;;) {
        if (data !== null) {
          const end = buf.indexOf('\r\n.\r\n');
          if (end < 0) return;
          mails.push({ to: rcpt, raw: data + buf.slice(0, end) });
          buf = buf.slice(end + 5);
          data = null;
          rcpt = [];
          s.write('250 OK queued\r\n');
          continue;
        }
        const i = buf.indexOf('\r\n');
        if (i < 0) return;
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const cmd = line.slice(0, 4).toUpperCase();
        if (cmd === 'EHLO') s.write('250-peers\r\n250-AUTH PLAIN\r\n250 8BITMIME\r\n');
        else if (cmd === 'HELO') s.write('250 peers\r\n');
        else if (cmd === 'AUTH') s.write('235 OK\r\n');
        else if (cmd === 'RCPT') {
          rcpt.push(line.replace(/^RCPT TO:\s*<?([^>]*)>?.*$/i, '$1'));
          s.write('250 OK\r\n');
        } else if (cmd === 'DATA') {
          data = '';
          s.write('354 go\r\n');
        } else if (cmd === 'QUIT') {
          s.end('221 bye\r\n');
          return;
        } else s.write('250 OK\r\n');
      }
    });
    s.on('error', () => {});
  })
  .listen(2525, '0.0.0.0');
http
  .createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      if (req.method === 'POST') {
        hooks.push({ path: req.url, headers: req.headers, body });
        res.writeHead(200).end('ok');
      } else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ mails, hooks }));
    });
  })
  .listen(8080, '0.0.0.0');
