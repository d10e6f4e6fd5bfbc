/**
 * An incremental server-sent events decoder working on bytes, for the model's streamed replies.
 *
 * Lines end with LF, CRLF or CR; a blank line ends an event; `data:` lines are joined with "\n";
 * `event:` names the event; comments (`:` lines) and other fields (`id`, `retry`, unknown) are
 * ignored. Lines are found on bytes (a line break is never inside a UTF-8 sequence) and only the
 * values are decoded, so a chunk holding whole events is decoded without any copy. Like the
 * openai SDK, a final event the server did not end with a blank line is still delivered at `end()`.
 */

/** Receives each event: its joined data and its `event` name, if any. May throw to stop the stream. */
export type SseEventHandler = (data: string, event: string | undefined) => void;

const LF = 10;
const CR = 13;
const COLON = 58;
const SPACE = 32;

export class SseDecoder {
  private onEvent: SseEventHandler;
  /** The bytes of a line not finished in the previous chunk. */
  private rest: Buffer | undefined;
  private data: string | undefined;
  private event: string | undefined;
  /** The previous chunk ended with CR: a LF opening the next one belongs to that line break. */
  private skipLf = false;
  /** The first line may start with a byte order mark, which is dropped. */
  private first = true;

  constructor(onEvent: SseEventHandler) {
    this.onEvent = onEvent;
  }

  /** Feeds the next bytes of the stream; events completed by them are delivered before it returns. */
  push(chunk: Buffer): void {
    let buf = chunk;
    let pos = 0;
    if (this.skipLf) {
      this.skipLf = false;
      if (buf.length > 0 && buf[0] === LF) pos = 1;
    }
    if (this.rest) {
      buf = Buffer.concat([this.rest, pos ? buf.subarray(pos) : buf]);
      pos = 0;
      this.rest = undefined;
    }
    const len = buf.length;
    let cr = buf.indexOf(CR, pos);
    while (pos < len) {
      const lf = buf.indexOf(LF, pos);
      if (cr !== -1 && cr < pos) cr = buf.indexOf(CR, pos);
      let end: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        end = cr;
        if (cr + 1 < len) next = buf[cr + 1] === LF ? cr + 2 : cr + 1;
        else {
          next = len;
          this.skipLf = true;
        }
      } else if (lf !== -1) {
        end = lf;
        next = lf + 1;
      } else {
        break;
      }
      this.line(buf, pos, end);
      pos = next;
    }
    // A copy, so that the chunk it came from is not held while the line waits for its end.
    if (pos < len) this.rest = Buffer.from(buf.subarray(pos));
  }

  /**
   * The stream ended: an unfinished last line and event are delivered (servers sometimes omit the final blank line).
   */
  end(): void {
    if (this.rest) {
      const rest = this.rest;
      this.rest = undefined;
      this.line(rest, 0, rest.length);
    }
    this.dispatch();
  }

  private line(buf: Buffer, start: number, end: number): void {
    let s = start;
    if (this.first) {
      this.first = false;
      if (end - s >= 3 && buf[s] === 0xef && buf[s + 1] === 0xbb && buf[s + 2] === 0xbf) s += 3;
    }
    if (s === end) {
      this.dispatch();
      return;
    }
    if (buf[s] === COLON) return; // a comment
    let colon = buf.indexOf(COLON, s);
    if (colon === -1 || colon > end) colon = end;
    const nameLen = colon - s;
    let v = colon + 1;
    if (v < end && buf[v] === SPACE) v++;
    if (nameLen === 4 && buf[s] === 100 && buf[s + 1] === 97 && buf[s + 2] === 116 && buf[s + 3] === 97) {
      // data
      const value = v < end ? buf.toString('utf8', v, end) : '';
      this.data = this.data === undefined ? value : `${this.data}\n${value}`;
    } else if (
      nameLen === 5 &&
      buf[s] === 101 &&
      buf[s + 1] === 118 &&
      buf[s + 2] === 101 &&
      buf[s + 3] === 110 &&
      buf[s + 4] === 116
    ) {
      // event
      this.event = v < end ? buf.toString('utf8', v, end) : '';
    }
  }

  /** A blank line: an event with data is delivered; one without data is dropped (as the SSE standard says). */
  private dispatch(): void {
    const data = this.data;
    const event = this.event;
    this.data = undefined;
    this.event = undefined;
    if (data !== undefined) this.onEvent(data, event || undefined);
  }
}
