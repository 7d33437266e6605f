/**
 * What a tracking hit's User-Agent says about the client (docs/tracking.md "Events": tracking
 * browser_name, browser_version, os, device_type, platform, bot). Pure: one string in, fields out.
 *
 * - Browsers, OS and device come from ua-parser-js (1.x, MIT), with the mail clients it does
 *   not know added here: Outlook, Thunderbird and Apple Mail (a WebKit UA without a Safari token).
 * - `platform` is the kind of client: `browser`, `email client`, `mail proxy`, `link scanner`,
 *   `bot`, or '' when there is no User-Agent.
 * - `bot` is true for isbot's crawlers and tools, for mail privacy proxies that fetch images for
 *   the reader (Gmail's GoogleImageProxy, Yahoo's YahooMailProxy, Apple Mail Privacy Protection,
 *   whose fetches carry the bare UA `Mozilla/5.0`) and for security scanners that follow links
 *   before anyone reads the mail (Microsoft Safe Links / Office discovery, Barracuda, Mimecast,
 *   Proofpoint, Symantec/MessageLabs, Trend Micro, Forcepoint, Cisco). Such hits are still
 *   recorded; receivers filter on `bot`.
 *
 * The input is cut to MAX_UA_LENGTH before any matching, and every pattern here is a plain
 * substring-like regex without nested quantifiers (linear time).
 */
import { isbot } from 'isbot';
import { UAParser } from 'ua-parser-js';

export interface ClientInfo {
  browser_name: string;
  browser_version: string;
  os: string;
  device_type: string;
  platform: string;
  bot: boolean;
}

export const MAX_UA_LENGTH = 1024;

const MAIL_PROXIES: Array<[RegExp, string]> = [
  [/GoogleImageProxy/, 'Gmail Image Proxy'],
  [/YahooMailProxy/, 'Yahoo Mail Proxy'],
];

/** Apple Mail Privacy Protection fetches remote content with exactly this User-Agent. */
const APPLE_MPP_UA = 'Mozilla/5.0';

const LINK_SCANNERS: Array<[RegExp, string]> = [
  [/Microsoft Office (?:Existence|Protocol) Discovery/i, 'Microsoft Office Discovery'],
  [/safelinks/i, 'Microsoft Safe Links'],
  [/BingPreview/i, 'BingPreview'],
  [/barracuda/i, 'Barracuda'],
  [/mimecast/i, 'Mimecast'],
  [/proofpoint|ppops-/i, 'Proofpoint'],
  [/symantec|messagelabs/i, 'Symantec'],
  [/trend ?micro/i, 'Trend Micro'],
  [/forcepoint|websense/i, 'Forcepoint'],
  [/ironport|cisco/i, 'Cisco'],
];

const MAIL_CLIENTS: Array<[RegExp, string]> = [
  [/Microsoft Outlook ([\d.]+)/, 'Outlook'],
  [/MSOffice (\d+)/, 'Outlook'],
  [/Thunderbird\/([\d.]+)/, 'Thunderbird'],
];

const EMPTY: ClientInfo = {
  browser_name: '',
  browser_version: '',
  os: '',
  device_type: '',
  platform: '',
  bot: false,
};

export function parseUserAgent(header: string | undefined): ClientInfo {
  const ua = (header ?? '').slice(0, MAX_UA_LENGTH).trim();
  if (!ua) return { ...EMPTY, bot: true };
  if (ua === APPLE_MPP_UA)
    return { ...EMPTY, browser_name: 'Apple Mail Privacy Protection', platform: 'mail proxy', bot: true };
  for (const [re, name] of MAIL_PROXIES) {
    if (re.test(ua)) return { ...EMPTY, browser_name: name, platform: 'mail proxy', bot: true };
  }

  const parsed = new UAParser(ua).getResult();
  const os = [parsed.os.name, parsed.os.version].filter(Boolean).join(' ');
  const deviceType = parsed.device.type ?? (parsed.os.name ? 'desktop' : '');
  const base = { os, device_type: deviceType };

  for (const [re, name] of LINK_SCANNERS) {
    if (re.test(ua)) return { ...EMPTY, ...base, browser_name: name, platform: 'link scanner', bot: true };
  }
  for (const [re, name] of MAIL_CLIENTS) {
    const m = re.exec(ua);
    if (m)
      return {
        ...base,
        browser_name: name,
        browser_version: m[1] ?? '',
        platform: 'email client',
        bot: false,
      };
  }
  if (isAppleMail(ua, parsed.device.vendor)) {
    return { ...base, browser_name: 'Apple Mail', browser_version: '', platform: 'email client', bot: false };
  }
  const bot = isbot(ua);
  return {
    browser_name: parsed.browser.name ?? '',
    browser_version: parsed.browser.version ?? '',
    ...base,
    platform: bot ? 'bot' : parsed.browser.name ? 'browser' : '',
    bot,
  };
}

/** Apple Mail (macOS, iOS) loads content in WebKit without Safari's `Version/` and `Safari/` tokens. */
function isAppleMail(ua: string, vendor: string | undefined): boolean {
  return (
    vendor === 'Apple' && ua.includes('AppleWebKit/') && !ua.includes('Safari/') && !ua.includes('Version/')
  );
}
