/**
 * A Server-Sent Events parser (the WHATWG "event stream interpretation"): text in, in any
 * chunking, events out. Lines end with LF, CRLF or CR; `data:` lines join with LF; comment lines
 * (`:`) and unknown fields are ignored; an event is dispatched on a blank line and only when it
 * had data. `retry:` sets the suggested reconnect delay. No dependency, so the client stays
 * dependency-free.
 */
export interface SseMessage {
  /** The `id:` of this event or, as the spec says, the last id seen before it ('' when none). */
  id: string;
  /** The `event:` type, 'message' when none was given. */
  event: string;
  data: string;
}

/** Longest line kept; a longer one (a broken or hostile server) fails the stream. */
const MAX_LINE = 1_048_576;

export class SseParser {
  private buffer = '';
  private lastId = '';
  private event = '';
  private data: string[] = [];
  /** A CR ended the previous chunk: a LF at the start of the next belongs to it. */
  private pendingCr = false;
  /** The last `retry:` value, in ms. */
  retryMs: number | undefined;

  /** Feeds a chunk; returns the events it completed. */
  push(chunk: string): SseMessage[] {
    let text = chunk;
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const out: SseMessage[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const ch = this.buffer.charCodeAt(i);
      if (ch !== 10 && ch !== 13) continue;
      this.line(this.buffer.slice(start, i), out);
      if (ch === 13) {
        if (i + 1 === this.buffer.length) this.pendingCr = true;
        else if (this.buffer.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
    if (this.buffer.length > MAX_LINE)
      throw new Error(`event stream line longer than ${MAX_LINE} characters`);
    return out;
  }

  private line(line: string, out: SseMessage[]): void {
    if (line === '') {
      if (this.data.length > 0)
        out.push({ id: this.lastId, event: this.event || 'message', data: this.data.join('\n') });
      this.data = [];
      this.event = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
    }
  }
}
