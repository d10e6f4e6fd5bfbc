/**
 * HTML form bodies as Gotify reads them: `application/x-www-form-urlencoded` and
 * `multipart/form-data` (what `curl -F title=… -F message=…` sends), text fields only.
 */

/** Parts of a multipart body read at most; a body is bounded by the manifest's limit anyway. */
const MAX_PARTS = 64;

/** The media type of a Content-Type header, lower-case, without parameters. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** The fields of a urlencoded form; a name given more than once keeps its first value. */
export function urlencodedFields(raw: Buffer): Map<string, string> {
  const fields = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(raw.toString('utf8'))) if (!fields.has(name)) fields.set(name, value);
  return fields;
}

/**
 * The text fields of a `multipart/form-data` body (RFC 7578): each part's `name` from its
 * Content-Disposition and its content as UTF-8. File parts (with a `filename`) are skipped; a name
 * given more than once keeps its first value. Undefined when the Content-Type has no boundary.
 */
export function multipartFields(raw: Buffer, contentType: string | undefined): Map<string, string> | undefined {
  const m = /;\s*boundary=(?:"([^"]{1,200})"|([^;\s]{1,200}))/i.exec(contentType ?? '');
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) return undefined;
  const fields = new Map<string, string>();
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  let at = raw.indexOf(delimiter);
  for (let n = 0; at >= 0 && n < MAX_PARTS; n++) {
    let start = at + delimiter.length;
    if (raw[start] === 0x2d && raw[start + 1] === 0x2d) break; // the closing delimiter
    if (raw[start] === 0x0d && raw[start + 1] === 0x0a) start += 2;
    const next = raw.indexOf(delimiter, start);
    if (next < 0) break;
    const end = raw[next - 2] === 0x0d && raw[next - 1] === 0x0a ? next - 2 : next;
    const part = raw.subarray(start, end);
    const headEnd = part.indexOf('\r\n\r\n');
    if (headEnd >= 0) {
      const head = part.subarray(0, headEnd).toString('utf8');
      const disposition = /^content-disposition:([^\r\n]*)/im.exec(head)?.[1] ?? '';
      const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
      if (name !== undefined && !/\bfilename\*?=/i.test(disposition) && !fields.has(name))
        fields.set(name, part.subarray(headEnd + 4).toString('utf8'));
    }
    at = next;
  }
  return fields;
}
