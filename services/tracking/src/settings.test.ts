import { configFrom } from '@mailyard/platform';
import { trackingSettings } from './settings';

const config = configFrom({ TRACKING_PORT: '3101', TRACKING_BASE_URL: '' });

describe('trackingSettings', () => {
  it('defaults: socket address, no GeoIP, local base URL', () => {
    expect(trackingSettings(config, {})).toMatchObject({
      port: 3101,
      baseUrl: 'http://127.0.0.1:3101',
      trustProxy: false,
    });
    expect(trackingSettings(config, {}).geoipDb).toBeUndefined();
  });

  it('reads the trust-proxy forms Express accepts', () => {
    expect(trackingSettings(config, { TRACKING_TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(trackingSettings(config, { TRACKING_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(trackingSettings(config, { TRACKING_TRUST_PROXY: 'loopback, 10.0.0.0/8,::1' }).trustProxy).toEqual(
      ['loopback', '10.0.0.0/8', '::1'],
    );
    expect(trackingSettings(config, { GEOIP_DB: '/var/lib/GeoLite2-City.mmdb' }).geoipDb).toBe(
      '/var/lib/GeoLite2-City.mmdb',
    );
  });

  it('refuses anything else with one line naming the variable', () => {
    expect(() => trackingSettings(config, { TRACKING_TRUST_PROXY: 'proxy.example' })).toThrow(
      /^Invalid configuration: TRACKING_TRUST_PROXY must be false, true, a hop count/,
    );
  });
});
