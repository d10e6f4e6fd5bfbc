/**
 * A server-sent events parser following the WHATWG rules: lines end in CR, LF or CRLF (also
 * across chunk boundaries), `:` starts a comment, `data` lines join with "\n", a blank line
 * dispatches. Pure code, so it is tested in Node too.
 */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

export class SseParser {
  private buf = '';
  private pendingCR = false;
  private event = '';
  private data: string[] = [];
  private id: string | undefined;
  private onEvent: (e: SseEvent) => void;

  constructor(onEvent: (e: SseEvent) => void) {
    this.onEvent = onEvent;
  }

  feed(chunk: string): void {
    let s = chunk;
    // A CR at the end of the last chunk may be half of a CRLF.
    if (this.pendingCR) {
      if (s.startsWith('\n')) s = s.slice(1);
      this.pendingCR = false;
    }
    this.buf += s;
    let start = 0;
    for (let i = 0; i < this.buf.length; i++) {
      const c = this.buf[i];
      if (c !== '\n' && c !== '\r') continue;
      this.line(this.buf.slice(start, i));
      if (c === '\r') {
        if (i + 1 === this.buf.length) this.pendingCR = true;
        else if (this.buf[i + 1] === '\n') i++;
      }
      start = i + 1;
    }
    this.buf = this.buf.slice(start);
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.id = value;
  }

  private dispatch(): void {
    if (this.data.length)
      this.onEvent({
        event: this.event || 'message',
        data: this.data.join('\n'),
        ...(this.id !== undefined ? { id: this.id } : {}),
      });
    this.event = '';
    this.data = [];
  }
}
