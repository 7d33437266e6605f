/**
 * Writes a tiny MaxMind DB (MMDB format 2.0, IPv4 tree, 32-bit records) for tests: one record
 * per IPv4 network. No MMDB writer is packaged for Node, and the format is small: a binary
 * search tree over the address bits, 16 zero bytes, the data section, then the metadata marker
 * and map (https://maxmind.github.io/MaxMind-DB/). Supports the types GeoIP records use:
 * maps, arrays, UTF-8 strings, unsigned integers.
 */
import { writeFileSync } from 'node:fs';

type Value = string | number | Value[] | { [key: string]: Value };

function control(type: number, size: number): Buffer {
  const head: number[] = [];
  const ext = type > 7 ? [type - 7] : [];
  const t = type > 7 ? 0 : type;
  if (size < 29) head.push((t << 5) | size);
  else if (size < 29 + 256) head.push((t << 5) | 29, size - 29);
  else {
    const s = size - 285;
    head.push((t << 5) | 30, s >> 8, s & 0xff);
  }
  return Buffer.from([head[0]!, ...ext, ...head.slice(1)]);
}

function uint(n: number): Buffer {
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return Buffer.from(bytes);
}

export function encode(v: Value, uintType = 6): Buffer {
  if (typeof v === 'string') {
    const b = Buffer.from(v, 'utf8');
    return Buffer.concat([control(2, b.length), b]);
  }
  if (typeof v === 'number') {
    const b = uint(v);
    return Buffer.concat([control(uintType, b.length), b]);
  }
  if (Array.isArray(v)) return Buffer.concat([control(11, v.length), ...v.map((x) => encode(x))]);
  const entries = Object.entries(v);
  return Buffer.concat([control(7, entries.length), ...entries.flatMap(([k, x]) => [encode(k), encode(x)])]);
}

/** Writes `path` with `networks` (`a.b.c.d/len` -> record). */
export function writeMmdb(path: string, networks: Record<string, { [key: string]: Value }>): void {
  const nodes: Array<[number, number]> = [[-1, -1]];
  const records: Buffer[] = [];
  const leaves: Array<{ node: number; side: number; record: number }> = [];
  for (const [cidr, record] of Object.entries(networks)) {
    const [ip, len] = cidr.split('/') as [string, string];
    const bits = ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
    let node = 0;
    for (let depth = 0; depth < Number(len); depth++) {
      const side = Math.floor(bits / 2 ** (31 - depth)) % 2;
      if (depth === Number(len) - 1) {
        leaves.push({ node, side, record: records.length });
        break;
      }
      let next = nodes[node]![side]!;
      if (next === -1) {
        next = nodes.length;
        nodes.push([-1, -1]);
        nodes[node]![side] = next;
      }
      node = next;
    }
    records.push(encode(record));
  }
  const nodeCount = nodes.length;
  const offsets: number[] = [];
  let at = 0;
  for (const r of records) {
    offsets.push(at);
    at += r.length;
  }
  for (const l of leaves) nodes[l.node]![l.side] = nodeCount + 16 + offsets[l.record]!;
  const tree = Buffer.alloc(nodeCount * 8);
  nodes.forEach(([left, right], i) => {
    tree.writeUInt32BE(left === -1 ? nodeCount : left, i * 8);
    tree.writeUInt32BE(right === -1 ? nodeCount : right, i * 8 + 4);
  });
  const metadata = Buffer.concat([
    control(7, 9),
    encode('node_count'),
    encode(nodeCount, 6),
    encode('record_size'),
    encode(32, 5),
    encode('ip_version'),
    encode(4, 5),
    encode('database_type'),
    encode('GeoIP2-City'),
    encode('languages'),
    encode(['en']),
    encode('binary_format_major_version'),
    encode(2, 5),
    encode('binary_format_minor_version'),
    encode(0, 5),
    encode('build_epoch'),
    encode(Math.floor(Date.now() / 1000), 9),
    encode('description'),
    encode({ en: 'Mailyard test database' }),
  ]);
  writeFileSync(
    path,
    Buffer.concat([
      tree,
      Buffer.alloc(16),
      ...records,
      Buffer.from([0xab, 0xcd, 0xef]),
      Buffer.from('MaxMind.com'),
      metadata,
    ]),
  );
}

/** A GeoIP2-City style record. */
export function cityRecord(o: { country: string; region: string; city: string; timeZone: string }) {
  return {
    country: { iso_code: o.country, names: { en: o.country } },
    subdivisions: [{ iso_code: o.region, names: { en: o.region } }],
    city: { names: { en: o.city } },
    location: { time_zone: o.timeZone },
  };
}
