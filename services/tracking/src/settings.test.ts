import { loadConfig } from '@mailyard/platform';
import { trackingSettings } from './settings';

/** The settings of an environment with TRACKING_PORT 3101 and `env`. */
const settingsOf = (env: Record<string, string>) =>
  trackingSettings(loadConfig({ TRACKING_PORT: '3101', ...env }));

describe('trackingSettings', () => {
  it('defaults: socket address, no GeoIP, local base URL', () => {
    expect(settingsOf({})).toMatchObject({
      port: 3101,
      baseUrl: 'http://127.0.0.1:3101',
      trustProxy: false,
    });
    expect(settingsOf({}).geoipDb).toBeUndefined();
  });

  it('reads the trust-proxy forms Express accepts', () => {
    expect(settingsOf({ TRACKING_TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(settingsOf({ TRACKING_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(settingsOf({ TRACKING_TRUST_PROXY: 'loopback, 10.0.0.0/8,::1' }).trustProxy).toEqual([
      'loopback',
      '10.0.0.0/8',
      '::1',
    ]);
    expect(settingsOf({ GEOIP_DB: '/var/lib/GeoLite2-City.mmdb' }).geoipDb).toBe(
      '/var/lib/GeoLite2-City.mmdb',
    );
  });

  it('refuses anything else with one line naming the variable', () => {
    expect(() => settingsOf({ TRACKING_TRUST_PROXY: 'proxy.example' })).toThrow(
      /^Invalid configuration: TRACKING_TRUST_PROXY must be false, true, a hop count/,
    );
  });
});
