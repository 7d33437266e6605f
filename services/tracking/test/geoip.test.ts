/**
 * GeoIP lookups through the `maxmind` reader on a real MMDB file written by the test (no
 * database is shipped): known networks give country/region/city/time zone, others and the
 * unset GEOIP_DB give empty strings.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cityRecord, writeMmdb } from '@mailyard/testkit/mmdb';
import { NO_GEO, openGeoLookup } from '../src/geoip';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailyard-geoip-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('reads country, region, city and time zone from a MaxMind-format database', async () => {
  const path = join(dir, 'city.mmdb');
  writeMmdb(path, {
    '203.0.113.0/24': cityRecord({
      country: 'NL',
      region: 'NH',
      city: 'Amsterdam',
      timeZone: 'Europe/Amsterdam',
    }),
    '198.51.100.0/25': cityRecord({
      country: 'US',
      region: 'CA',
      city: 'San Francisco',
      timeZone: 'America/Los_Angeles',
    }),
  });
  const geo = await openGeoLookup(path);
  expect(geo('203.0.113.7')).toEqual({
    country: 'NL',
    region: 'NH',
    city: 'Amsterdam',
    time_zone: 'Europe/Amsterdam',
  });
  expect(geo('::ffff:198.51.100.1')).toEqual({
    country: 'US',
    region: 'CA',
    city: 'San Francisco',
    time_zone: 'America/Los_Angeles',
  });
  expect(geo('198.51.100.200')).toEqual(NO_GEO);
  expect(geo('127.0.0.1')).toEqual(NO_GEO);
  expect(geo('not an ip')).toEqual(NO_GEO);
});

it('gives empty fields without a database', async () => {
  const geo = await openGeoLookup(undefined);
  expect(geo('203.0.113.7')).toEqual(NO_GEO);
});
