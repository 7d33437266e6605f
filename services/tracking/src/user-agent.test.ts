import { parseUserAgent } from './user-agent';

const CHROME_WIN =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1';
const SAFARI_IPAD =
  'Mozilla/5.0 (iPad; CPU OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1';
const CHROME_ANDROID =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.144 Mobile Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0';
const APPLE_MAIL_MAC =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)';
const APPLE_MAIL_IOS =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 16_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148';
const THUNDERBIRD = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:115.0) Gecko/20100101 Thunderbird/115.3.1';
const OUTLOOK = 'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17029; Pro)';
const OUTLOOK_OLD = 'Mozilla/4.0 (compatible; ms-office; MSOffice 16)';
const GMAIL_PROXY =
  'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';
const YAHOO_PROXY = 'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html';

describe('parseUserAgent', () => {
  it('reads desktop and mobile browsers', () => {
    expect(parseUserAgent(CHROME_WIN)).toEqual({
      browser_name: 'Chrome',
      browser_version: '120.0.0.0',
      os: 'Windows 10',
      device_type: 'desktop',
      platform: 'browser',
      bot: false,
    });
    expect(parseUserAgent(SAFARI_IPHONE)).toEqual({
      browser_name: 'Mobile Safari',
      browser_version: '17.1',
      os: 'iOS 17.1',
      device_type: 'mobile',
      platform: 'browser',
      bot: false,
    });
    expect(parseUserAgent(SAFARI_IPAD)).toMatchObject({ device_type: 'tablet', bot: false });
    expect(parseUserAgent(CHROME_ANDROID)).toMatchObject({
      browser_name: 'Chrome',
      os: 'Android 14',
      device_type: 'mobile',
      bot: false,
    });
    expect(parseUserAgent(FIREFOX)).toMatchObject({ browser_name: 'Firefox', browser_version: '121.0' });
  });

  it('recognises mail clients', () => {
    expect(parseUserAgent(APPLE_MAIL_MAC)).toEqual({
      browser_name: 'Apple Mail',
      browser_version: '',
      os: 'Mac OS 10.15.7',
      device_type: 'desktop',
      platform: 'email client',
      bot: false,
    });
    expect(parseUserAgent(APPLE_MAIL_IOS)).toMatchObject({
      browser_name: 'Apple Mail',
      os: 'iOS 16.5',
      device_type: 'mobile',
      platform: 'email client',
    });
    expect(parseUserAgent(THUNDERBIRD)).toMatchObject({
      browser_name: 'Thunderbird',
      browser_version: '115.3.1',
      os: 'Windows 10',
      platform: 'email client',
      bot: false,
    });
    expect(parseUserAgent(OUTLOOK)).toMatchObject({
      browser_name: 'Outlook',
      browser_version: '16.0.17029',
      platform: 'email client',
      bot: false,
    });
    expect(parseUserAgent(OUTLOOK_OLD)).toMatchObject({ browser_name: 'Outlook', browser_version: '16' });
  });

  it('flags mail privacy proxies as bots', () => {
    expect(parseUserAgent(GMAIL_PROXY)).toMatchObject({
      browser_name: 'Gmail Image Proxy',
      platform: 'mail proxy',
      bot: true,
    });
    expect(parseUserAgent(YAHOO_PROXY)).toMatchObject({ browser_name: 'Yahoo Mail Proxy', bot: true });
    expect(parseUserAgent('Mozilla/5.0')).toMatchObject({
      browser_name: 'Apple Mail Privacy Protection',
      platform: 'mail proxy',
      bot: true,
    });
  });

  it('flags link scanners and crawlers as bots', () => {
    for (const [ua, name] of [
      ['Barracuda Sentinel (EE)', 'Barracuda'],
      ['Mozilla/5.0 (compatible; BingPreview/1.0b)', 'BingPreview'],
      ['Microsoft Office Existence Discovery', 'Microsoft Office Discovery'],
      ['Mozilla/5.0 (compatible; Mimecast URL Protect)', 'Mimecast'],
      ['Mozilla/5.0 (Windows NT 10.0) ppops-1a2b Proofpoint', 'Proofpoint'],
    ] as const) {
      expect(parseUserAgent(ua)).toMatchObject({ browser_name: name, platform: 'link scanner', bot: true });
    }
    expect(parseUserAgent('curl/8.4.0')).toMatchObject({ platform: 'bot', bot: true });
    expect(parseUserAgent('python-requests/2.31.0').bot).toBe(true);
    expect(
      parseUserAgent('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)').bot,
    ).toBe(true);
  });

  it('treats a missing User-Agent as a bot and bounds long input', () => {
    expect(parseUserAgent(undefined)).toMatchObject({ platform: '', bot: true });
    expect(parseUserAgent('')).toMatchObject({ bot: true });
    expect(parseUserAgent(`${CHROME_WIN}${' x'.repeat(100_000)}`)).toMatchObject({ browser_name: 'Chrome' });
  });
});
