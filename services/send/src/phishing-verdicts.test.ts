import { type PhishingInput, type PhishingVerdict, checkPhishingAsync } from './phishing';
import { PhishingVerdicts } from './phishing-verdicts';

const deceptive = '<a href="https://evil.example.net/login">https://bank.example.com</a>';

describe('PhishingVerdicts', () => {
  it('scans each distinct content once and gives the same verdicts as a scan', async () => {
    const verdicts = new PhishingVerdicts();
    const scanned: PhishingInput[] = [];
    const check = (input: PhishingInput) => {
      scanned.push(input);
      return checkPhishingAsync(input, { blocklist: [] });
    };
    const clean: PhishingInput = {
      html: '<p>Hello <a href="https://a.example.com">a.example.com</a></p>',
      text: 'Hello',
    };
    const bad: PhishingInput = { html: deceptive, text: 'x' };
    for (let i = 0; i < 3; i++) {
      expect(await verdicts.verdict({ ...clean }, check)).toBeNull();
      expect((await verdicts.verdict({ ...bad }, check))?.rule).toBe('deceptive_link');
    }
    expect(scanned).toHaveLength(2);
  });

  it('keeps html and text apart, and absent apart from empty', async () => {
    const verdicts = new PhishingVerdicts();
    let scans = 0;
    const check = async (): Promise<PhishingVerdict | null> => {
      scans++;
      return null;
    };
    await verdicts.verdict({ html: 'ab', text: 'c' }, check);
    await verdicts.verdict({ html: 'a', text: 'bc' }, check);
    await verdicts.verdict({ html: 'a\u0000', text: 'bc' }, check);
    await verdicts.verdict({ html: '', text: 'x' }, check);
    await verdicts.verdict({ text: 'x' }, check);
    expect(scans).toBe(5);
  });

  it('is bounded: large contents are always scanned, the oldest entry goes first', async () => {
    const verdicts = new PhishingVerdicts(2, 10);
    let scans = 0;
    const check = async (): Promise<PhishingVerdict | null> => {
      scans++;
      return null;
    };
    await verdicts.verdict({ html: 'x'.repeat(11) }, check);
    await verdicts.verdict({ html: 'x'.repeat(11) }, check);
    expect(scans).toBe(2);
    for (const html of ['a', 'b', 'c', 'c', 'b', 'a']) await verdicts.verdict({ html }, check);
    // a, b, c scanned; c and b remembered; a was dropped when c came in.
    expect(scans).toBe(2 + 4);
  });
});
