/**
 * Byte-level BPE token strings (GPT-2's byte-to-character table, used by Llama 3, Qwen and
 * DeepSeek tokenizers): each byte is written as one printable character. Reading the table back
 * tells how many UTF-16 code units of the original text a token's bytes carry.
 */

/** The character that stands for each byte value. */
function byteCharacters(): number[] {
  const chars: number[] = [];
  let extra = 0;
  for (let byte = 0; byte < 256; byte++) {
    const printable = (byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) || byte >= 174;
    chars.push(printable ? byte : 256 + extra++);
  }
  return chars;
}

const CHAR_OF_BYTE = byteCharacters().map((char) => String.fromCharCode(char));
const BYTE_OF_CHAR = new Map(byteCharacters().map((char, byte) => [char, byte]));

/** The byte-level character that stands for `byte` (0–255). */
export function byteLevelCharacter(byte: number): string {
  return CHAR_OF_BYTE[byte]!;
}

/** `text`'s UTF-8 bytes written as byte-level characters: what a byte-level BPE model merges. */
export function byteLevelString(text: string): string {
  return byteLevelOf(Buffer.from(text, "utf8"));
}

/** UTF-8 `bytes` written as byte-level characters. */
export function byteLevelOf(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) out += CHAR_OF_BYTE[byte];
  return out;
}

/**
 * UTF-16 code units of the text a byte-level token string encodes: one per UTF-8 lead byte (two
 * for a 4-byte sequence, a surrogate pair), so a character split across tokens counts in the token
 * that starts it. Null when `token` is not a byte-level string (an added token, for instance).
 */
export function byteLevelUnits(token: string): number | null {
  let units = 0;
  for (let i = 0; i < token.length; i++) {
    const byte = BYTE_OF_CHAR.get(token.charCodeAt(i));
    if (byte === undefined) return null;
    if ((byte & 0xc0) !== 0x80) units += byte >= 0xf0 ? 2 : 1;
  }
  return units;
}
