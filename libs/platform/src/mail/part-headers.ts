/**
 * The headers of a message's MIME parts, measured before anything parses them, pure.
 * mailparser (mailsplit) reads every part's header as it reads the message's: address fields
 * into address objects, Content-Type parameters, encoded words, each part header in one
 * synchronous stretch (a part whose `To:` held 512 KB of `g:a@b.c;` blocked the process 0.7 s,
 * and a 25 MB message holds 25 such parts). So the limits of header-block.ts hold for all the
 * part headers of a message together (`partHeadersProblem`), and `messageHeaderProblem` is what
 * the MX refuses at the end of DATA and what processing checks before parsing.
 * The parts are found as mailsplit finds them: a line `--<boundary>` (trailing blanks allowed)
 * of a boundary declared by the Content-Type of the message or of a part above opens a part,
 * whose header block follows. One pass over the body's bytes, only for a multipart message;
 * at most MAX_PARTS parts are looked at (mailsplit refuses more MIME nodes: the message then
 * becomes the error form without its parts being read).
 */
import { type HeaderStats, boundaryOf, headerBlockProblem, scanHeaderBlock } from './header-block';

export const MAX_PARTS = 1000;

/** Why the MX refuses this message's headers (its `552 5.3.4` text), top block or parts; or null. */
export function messageHeaderProblem(raw: Buffer, top: HeaderStats = scanHeaderBlock(raw)): string | null {
  return headerBlockProblem(top) ?? partHeadersProblem(scanPartHeaders(raw, top));
}

export function partHeadersProblem(parts: HeaderStats): string | null {
  return headerBlockProblem(parts, 'parts');
}

/** All part headers of the message summed into one HeaderStats (empty for a single-part message). */
export function scanPartHeaders(raw: Buffer, top: HeaderStats): HeaderStats {
  const total: HeaderStats = { bytes: 0, lines: 0, fields: new Map(), truncated: false, addresses: 0 };
  /** Delimiter lines (`--` + boundary) by their length. */
  const delimiters = new Map<number, Buffer[]>();
  let known = 0;
  const declare = (block: Buffer, stats: HeaderStats) => {
    const boundary = boundaryOf(block, stats);
    if (!boundary || known >= MAX_PARTS) return;
    const d = Buffer.from(`--${boundary}`, 'latin1');
    const same = delimiters.get(d.length);
    if (same) same.push(d);
    else delimiters.set(d.length, [d]);
    known++;
  };
  declare(raw, top);
  if (known === 0) return total;
  let parts = 0;
  let start = top.bytes + (raw[top.bytes] === 0x0d ? 2 : 1); // the body, after the empty line
  for (let i = start; i <= raw.length; i++) {
    if (i < raw.length && raw[i] !== 0x0a) continue;
    if (isDelimiter(start, i) && i < raw.length) {
      const block = raw.subarray(i + 1);
      const stats = scanHeaderBlock(block);
      add(total, stats);
      if (++parts >= MAX_PARTS || partHeadersProblem(total)) break;
      declare(block, stats);
      i += stats.bytes; // on to the empty line after the part's header
    }
    start = i + 1;
  }
  return total;

  /** The line [from, to) (its CR and trailing blanks dropped) opens a part. */
  function isDelimiter(from: number, to: number): boolean {
    if (raw[from] !== 0x2d || raw[from + 1] !== 0x2d) return false;
    let end = to;
    while (end > from && (raw[end - 1] === 0x0d || raw[end - 1] === 0x20 || raw[end - 1] === 0x09)) end--;
    const candidates = delimiters.get(end - from);
    if (!candidates) return false;
    // compared here byte by byte (a native call per line cost more than these few bytes)
    return candidates.some((d) => {
      for (let k = 2; k < d.length; k++) if (raw[from + k] !== d[k]) return false;
      return true;
    });
  }
}

function add(total: HeaderStats, part: HeaderStats): void {
  total.bytes += part.bytes;
  total.lines += part.lines;
  total.addresses += part.addresses;
  total.truncated ||= part.truncated;
  for (const [name, f] of part.fields) {
    const t = total.fields.get(name);
    if (!t) total.fields.set(name, { ...f });
    else {
      t.count += f.count;
      t.maxBytes = Math.max(t.maxBytes, f.maxBytes);
      t.totalBytes += f.totalBytes;
    }
  }
}
