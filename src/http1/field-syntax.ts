/**
 * The HTTP field syntax (RFC 9110 §5) both request heads and response heads are checked against.
 * Checked a character at a time against a table: on the short strings of a head this costs a
 * fraction of a regular expression's test on a sliced string.
 */

const TOKEN_CHARS = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
  TOKEN_CHARS[c.charCodeAt(0)] = 1;

/** True for a token: a method or a field name (one or more tchar). */
export function isToken(text: string): boolean {
  const length = text.length;
  if (length === 0) return false;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128 || TOKEN_CHARS[c] !== 1) return false;
  }
  return true;
}

/** True when `text` holds a character no field value may hold (a control character other than tab, or one past U+00FF). */
export function hasBadValueChar(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 ? c !== 0x09 : c === 0x7f || c > 0xff) return true;
  }
  return false;
}
