/**
 * Geolocation of a tracking hit's IP from a MaxMind-format database (GeoLite2/GeoIP2 City or
 * Country, or any .mmdb with the same record layout), opened once at start with the `maxmind`
 * package (in-memory, LRU-cached lookups). Fields follow Mailgun's geolocation: country is the
 * ISO 3166-1 code, region the ISO code of the first subdivision, city the English name,
 * time_zone the IANA zone. Without a database, or for an address it does not know (private
 * ranges), every field is ''.
 */
import maxmind, { type CityResponse, type Reader } from 'maxmind';

export interface GeoFields {
  country: string;
  city: string;
  region: string;
  time_zone: string;
}

export const NO_GEO: GeoFields = { country: '', city: '', region: '', time_zone: '' };

export type GeoLookup = (ip: string) => GeoFields;

export async function openGeoLookup(path: string | undefined): Promise<GeoLookup> {
  if (!path) return () => NO_GEO;
  const reader = await maxmind.open<CityResponse>(path);
  return geoLookupFrom(reader);
}

export function geoLookupFrom(reader: Reader<CityResponse>): GeoLookup {
  return (ip) => {
    let r: CityResponse | null;
    try {
      r = reader.get(ip.replace(/^::ffff:/, ''));
    } catch {
      return NO_GEO;
    }
    if (!r) return NO_GEO;
    return {
      country: r.country?.iso_code ?? r.registered_country?.iso_code ?? '',
      city: r.city?.names?.en ?? '',
      region: r.subdivisions?.[0]?.iso_code ?? '',
      time_zone: r.location?.time_zone ?? '',
    };
  };
}
