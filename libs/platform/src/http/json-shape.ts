/**
 * Incremental structural scan of a JSON byte stream, fed chunk by chunk as a body arrives. It
 * tracks only what makes JSON.parse and the code after it expensive or unsafe: nesting depth
 * (deep bodies overflow the stack of recursive consumers such as JSON.stringify and zod) and
 * the number of values (millions of `{}` cost seconds and gigabytes to materialise). Strings
 * are skipped with native `indexOf` jumps, so a large body costs one cheap pass spread over its
 * chunks and a body over a limit is refused as soon as the limit is crossed, before it is
 * buffered or parsed. It does not validate JSON: JSON.parse does that afterwards on a body now
 * known to be bounded.
 *
 * Values are counted as container opens plus separators (`,`) plus one: an upper bound of the
 * elements and members a parse would create.
 */
export type ShapeProblem = 'depth' | 'values';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

export class JsonShapeScanner {
  private depth = 0;
  private values = 1;
  private inString = false;
  /** The previous chunk ended inside a string right after a backslash. */
  private escapePending = false;

  constructor(
    private readonly maxDepth: number,
    private readonly maxValues: number,
  ) {}

  /** Scans the next chunk; the first limit crossed, or null. */
  feed(chunk: Uint8Array): ShapeProblem | null {
    const n = chunk.length;
    let i = 0;
    // Next quote / backslash positions in this chunk, found once and reused (linear per chunk).
    let nextQuote = -2;
    let nextBackslash = -2;
    const find = (byte: number, from: number): number => {
      const at = Buffer.prototype.indexOf.call(chunk, byte, from) as number;
      return at === -1 ? n : at;
    };
    while (i < n) {
      if (this.inString) {
        if (this.escapePending) {
          this.escapePending = false;
          i++;
          continue;
        }
        if (nextQuote !== n && nextQuote < i) nextQuote = find(QUOTE, i);
        if (nextBackslash !== n && nextBackslash < i) nextBackslash = find(BACKSLASH, i);
        if (nextBackslash < nextQuote) {
          // `\x`: skip the escaped byte (it may be in the next chunk).
          if (nextBackslash + 1 < n) i = nextBackslash + 2;
          else {
            this.escapePending = true;
            i = n;
          }
        } else if (nextQuote < n) {
          this.inString = false;
          i = nextQuote + 1;
        } else {
          i = n;
        }
        continue;
      }
      const c = chunk[i]!;
      if (c === QUOTE) {
        this.inString = true;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (++this.depth > this.maxDepth) return 'depth';
        if (++this.values > this.maxValues) return 'values';
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (this.depth > 0) this.depth--;
      } else if (c === COMMA) {
        if (++this.values > this.maxValues) return 'values';
      }
      i++;
    }
    return null;
  }
}
