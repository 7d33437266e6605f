// Test peers for scripts/compose-test.sh, no dependencies (runs in the Mailyard image):
// - SMTP sink on 2525: accepts any AUTH, records each message.
// - HTTP on 8080: POST <any path> records a webhook call; POST /dns adds DNS records
//   ({txt:[{name,value}], mx:[{name,host,preference}], a:[{name,ip}]}); GET /received returns
//   {mails, hooks}.
// - DNS on 5353 (UDP and TCP): answers A, TXT and MX from those records, plus `peers` -> PEERS_IP,
//   so DNS_SERVERS can point at it (domain verification, inbound SPF/DKIM checks, guarded
//   connects to `peers`). Every other name is NXDOMAIN. UDP answers over 512 bytes are truncated
//   (TC) and the resolver retries over TCP.
const net = require('node:net');
const http = require('node:http');
const dgram = require('node:dgram');
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

// --- DNS ---------------------------------------------------------------------------------------
/** name (lowercase, no trailing dot) -> {a: [ip], txt: [value], mx: [{host, preference}]} */
const zone = new Map();
const norm = (n) => String(n).toLowerCase().replace(/\.$/, '');
const entry = (n) => {
  const k = norm(n);
  if (!zone.has(k)) zone.set(k, { a: [], txt: [], mx: [] });
  return zone.get(k);
};
if (process.env.PEERS_IP) entry('peers').a.push(process.env.PEERS_IP);

function addRecords(r) {
  for (const x of r.a ?? []) entry(x.name).a.push(x.ip);
  for (const x of r.txt ?? []) entry(x.name).txt.push(x.value);
  for (const x of r.mx ?? []) entry(x.name).mx.push({ host: x.host, preference: x.preference ?? 10 });
}

const u16 = (n) => Buffer.from([n >> 8, n & 255]);
const encodeName = (name) =>
  Buffer.concat([
    ...norm(name)
      .split('.')
      .filter(Boolean)
      .map((l) => Buffer.concat([Buffer.from([Buffer.byteLength(l)]), Buffer.from(l)])),
    Buffer.from([0]),
  ]);
const rr = (type, rdata) =>
  Buffer.concat([u16(0xc00c), u16(type), u16(1), Buffer.from([0, 0, 0, 60]), u16(rdata.length), rdata]);

/** The answer to one query message, or null for something that is not a query. */
function answer(q, udp) {
  if (q.length < 12) return null;
  let off = 12;
  const labels = [];
  while (off < q.length && q[off] !== 0) {
    const len = q[off];
    if (len > 63) return null;
    labels.push(q.subarray(off + 1, off + 1 + len).toString('latin1'));
    off += len + 1;
  }
  if (off + 5 > q.length) return null;
  const qtype = q.readUInt16BE(off + 1);
  const question = q.subarray(12, off + 5);
  const e = zone.get(norm(labels.join('.')));
  const answers = [];
  if (e && qtype === 1) for (const ip of e.a) answers.push(rr(1, Buffer.from(ip.split('.').map(Number))));
  if (e && qtype === 16)
    for (const v of e.txt) {
      const b = Buffer.from(v);
      const parts = [];
      for (let i = 0; i < b.length || parts.length === 0; i += 255) {
        const c = b.subarray(i, i + 255);
        parts.push(Buffer.from([c.length]), c);
      }
      answers.push(rr(16, Buffer.concat(parts)));
    }
  if (e && qtype === 15)
    for (const m of e.mx) answers.push(rr(15, Buffer.concat([u16(m.preference), encodeName(m.host)])));
  const rd = q[2] & 1;
  const rcode = e ? 0 : 3;
  const head = (tc, n) =>
    Buffer.concat([
      q.subarray(0, 2),
      Buffer.from([0x84 | (tc ? 2 : 0) | rd, rcode]),
      u16(1),
      u16(n),
      u16(0),
      u16(0),
    ]);
  const full = Buffer.concat([head(false, answers.length), question, ...answers]);
  if (udp && full.length > 512) return Buffer.concat([head(true, 0), question]);
  return full;
}

const udp = dgram.createSocket('udp4');
udp.on('message', (msg, from) => {
  const a = answer(msg, true);
  if (a) udp.send(a, from.port, from.address);
});
udp.bind(5353, '0.0.0.0');
net
  .createServer((s) => {
    let buf = Buffer.alloc(0);
    s.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const a = answer(buf.subarray(2, 2 + buf.readUInt16BE(0)), false);
        buf = buf.subarray(2 + buf.readUInt16BE(0));
        if (a) s.write(Buffer.concat([u16(a.length), a]));
      }
    });
    s.on('error', () => {});
  })
  .listen(5353, '0.0.0.0');

// --- HTTP ----------------------------------------------------------------------------------------
http
  .createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/dns') {
        addRecords(JSON.parse(body));
        res.writeHead(200).end('ok');
      } else if (req.method === 'GET' && req.url === '/received')
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ mails, hooks }));
      else {
        hooks.push({ method: req.method, path: req.url, headers: req.headers, body });
        res.writeHead(200).end('ok');
      }
    });
  })
  .listen(8080, '0.0.0.0');
