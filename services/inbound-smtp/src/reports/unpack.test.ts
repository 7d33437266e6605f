import { deflateRawSync, gzipSync } from 'node:zlib';
import { watchMemory } from '@mailyard/testkit/memory-peak';
import { buildZip } from '@mailyard/testkit/zip';
import { MAX_REPORT_BYTES, MAX_ZIP_ENTRIES, type Unpacked, inflateCap, unpack } from './unpack';

const XML = Buffer.from('<?xml version="1.0"?><feedback><report_metadata/></feedback>');
const MiB = 1024 * 1024;

function refused(r: Unpacked): string {
  if (r.ok) throw new Error('expected a refusal');
  return r.reason;
}

/** `n` MiB of zeros, gzip-compressed without ever holding them: one member repeated (RFC 1952 2.2). */
function gzipBomb(totalMiB: number, memberMiB = 100): Buffer {
  const member = gzipSync(Buffer.alloc(memberMiB * MiB), { level: 9 });
  return Buffer.concat(Array.from({ length: Math.ceil(totalMiB / memberMiB) }, () => member));
}

test('plain, gzip and zip documents come out as they went in', async () => {
  expect(await unpack(XML, 'r.xml')).toEqual({ ok: true, documents: [{ name: 'r.xml', bytes: XML }] });
  expect(await unpack(gzipSync(XML), 'r.xml.gz')).toEqual({
    ok: true,
    documents: [{ name: 'r.xml', bytes: XML }],
  });
  const two = await unpack(
    buildZip([
      { name: 'a.xml', data: XML },
      { name: 'dir/', data: Buffer.alloc(0), stored: true },
      { name: 'b.xml', data: XML, stored: true },
    ]),
  );
  expect(two).toEqual({
    ok: true,
    documents: [
      { name: 'a.xml', bytes: XML },
      { name: 'b.xml', bytes: XML },
    ],
  });
});

test('a 10 GB gzip bomb is refused at the cap, never inflated', async () => {
  const bomb = gzipBomb(10 * 1024);
  expect(bomb.length).toBeLessThan(15 * MiB);
  const memory = watchMemory(5);
  const reason = refused(await unpack(bomb, 'bomb.xml.gz'));
  expect(memory.stop()).toBeLessThan(4 * MAX_REPORT_BYTES);
  expect(reason).toMatch(/uncompressed report over 20 MB/);
});

test('a 200 MB gzip is refused at the 20 MB cap; a small one that inflates 1000x at the ratio cap', async () => {
  expect(refused(await unpack(gzipBomb(200, 200)))).toMatch(/over 20 MB/);
  const small = gzipSync(Buffer.alloc(8 * MiB));
  expect(inflateCap(small.length)).toBeLessThan(8 * MiB);
  expect(refused(await unpack(small))).toMatch(/compression bomb/);
});

test('zip bombs: a huge declared size is refused unread, a small declared size that lies is cut', async () => {
  expect(
    refused(await unpack(buildZip([{ name: 'r.xml', data: XML, declaredSize: 4_000_000_000 }]))),
  ).toMatch(/declares 4000000000 bytes/);
  // 200 MB of zeros declared as 1000 bytes: yauzl stops the stream past the declared size.
  const zeros = deflateRawSync(Buffer.alloc(200 * MiB), { level: 9 });
  const memory = watchMemory(5);
  const reason = refused(
    await unpack(buildZip([{ name: 'r.xml', data: XML, raw: zeros, declaredSize: 1000 }])),
  );
  expect(memory.stop()).toBeLessThan(4 * MAX_REPORT_BYTES);
  expect(reason).toMatch(/too many bytes|over/);
  // declared within the ratio, actual far past the cap
  const lied = buildZip([{ name: 'r.xml', data: XML, raw: zeros, declaredSize: 19 * MiB }]);
  expect(refused(await unpack(lied))).toMatch(/r\.xml/);
});

test('zip with too many entries, nested archives, encrypted entries', async () => {
  const many = buildZip(Array.from({ length: 1000 }, (_, i) => ({ name: `r${i}.xml`, data: XML })));
  expect(refused(await unpack(many))).toBe(`zip with 1000 entries (at most ${MAX_ZIP_ENTRIES})`);
  const inner = buildZip([{ name: 'r.xml', data: XML }]);
  expect(refused(await unpack(buildZip([{ name: 'inner.zip', data: inner }])))).toMatch(/nested archive/);
  expect(refused(await unpack(buildZip([{ name: 'report.xml', data: inner }])))).toMatch(/nested archive/);
  expect(refused(await unpack(buildZip([{ name: 'r.xml', data: gzipSync(XML) }])))).toMatch(/nested archive/);
  expect(refused(await unpack(gzipSync(gzipSync(XML))))).toMatch(/nested archive in gzip/);
  expect(refused(await unpack(buildZip([{ name: 'r.xml', data: XML, encrypted: true }])))).toMatch(
    /encrypted/,
  );
});

test('broken input is refused with a reason, never thrown', async () => {
  expect(refused(await unpack(Buffer.alloc(0)))).toBe('empty attachment');
  expect(refused(await unpack(gzipSync(XML).subarray(0, 12)))).toMatch(/^gzip:/);
  expect(refused(await unpack(buildZip([{ name: 'r.xml', data: XML }]).subarray(0, 40)))).toMatch(/^zip:/);
  expect(refused(await unpack(Buffer.alloc(MAX_REPORT_BYTES + 1, 0x3c)))).toMatch(/report over 20 MB/);
});
