/**
 * The phishing verdicts of recent copies by their content: the verdict is a function of the
 * rendered HTML and text (and the process's settings, fixed for its life), and the copies of one
 * send often carry the same content (a tracked send without substitutions is a copy per
 * recipient; substitutions only in the subject). The scan (HTML tokenizer, URL parsing per
 * link: about 0.1 CPU-ms for a small newsletter) then runs once per distinct content, not per copy.
 *
 * Bounded: only contents up to `maxChars` are kept (a lookup hashes and compares the strings,
 * linear and native, far cheaper than a scan), at most `maxEntries` of them, oldest dropped
 * first. A `too_complex` verdict (the time budget ran out) is kept too: such content is refused
 * and not checked again (phishing.ts), whichever copy carries it.
 */
import type { PhishingInput, PhishingVerdict } from './phishing';

export class PhishingVerdicts {
  private readonly entries = new Map<string, PhishingVerdict | null>();

  constructor(
    private readonly maxEntries = 256,
    private readonly maxChars = 256 * 1024,
  ) {}

  /** The verdict of `input`: remembered, or `check`'s (then remembered). */
  async verdict(
    input: PhishingInput,
    check: (input: PhishingInput) => Promise<PhishingVerdict | null>,
  ): Promise<PhishingVerdict | null> {
    const html = input.html ?? '';
    const text = input.text ?? '';
    if (html.length + text.length > this.maxChars) return check(input);
    // html and text apart: the lengths and a separator make the key unambiguous.
    const key = `${input.html === undefined ? '-' : html.length}:${input.text === undefined ? '-' : text.length}:${html}\u0000${text}`;
    const known = this.entries.get(key);
    if (known !== undefined) return known;
    const verdict = await check(input);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, verdict);
    return verdict;
  }
}
