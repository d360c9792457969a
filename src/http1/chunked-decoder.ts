/**
 * Decodes a chunked response body (RFC 9112 §7.1) as it arrives, split anywhere across reads. A
 * chunk whose whole frame (size line, data, CRLF) lies in one read and has no extension is handed
 * over with that frame, so a relay whose client leg is chunked too can write the frame as it is
 * instead of framing the data again.
 */
import type { IncomingHttpHeaders } from "node:http";
import { badResponse } from "./errors.ts";
import { addField } from "./response-head.ts";

/**
 * Receives a chunk's data: `payload` a piece of it (never empty), `frame` the whole frame it came
 * in when that lay in one read with no extension (else undefined). Returns false to stop decoding.
 */
export type ChunkData = (payload: Buffer, frame: Buffer | undefined) => boolean;

/** More than 13 hex digits would pass 2^52 bytes, past exact integers; no server sends that. */
const MAX_SIZE_DIGITS = 13;
/** Longest chunk extension, and the longest trailer section, accepted. */
const MAX_EXTENSION_BYTES = 4096;
const MAX_TRAILER_BYTES = 16 * 1024;

const CR = 0x0d;
const LF = 0x0a;

enum State {
  Size,
  Extension,
  SizeLf,
  Data,
  DataCr,
  DataLf,
  Trailer,
  TrailerLf,
}

/** Decoded value of a hex digit, or -1. */
function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

/** One chunked body, decoded across calls to {@link ChunkedDecoder.push}. */
export class ChunkedDecoder {
  private state = State.Size;
  private digits = 0;
  private size = 0;
  private extensionBytes = 0;
  private trailerBytes = 0;
  private trailerLine: Buffer[] = [];
  /** The trailer fields, once the body ended (empty when the server sent none). */
  readonly trailers: IncomingHttpHeaders = Object.create(null);

  /**
   * Decodes `buf` from `start`. Returns the offset just past the body's end (the trailers' empty
   * line), -1 when all of `buf` was consumed and the body goes on, or -2 when `onData` returned
   * false. Throws an `HTTP1_BAD_RESPONSE` error on malformed framing.
   */
  push(buf: Buffer, start: number, onData: ChunkData): number {
    let i = start;
    const len = buf.length;
    while (i < len) {
      if (this.state === State.Size && this.digits === 0) {
        const next = this.wholeFrame(buf, i, onData);
        if (next === -2) return -2;
        if (next > i) {
          i = next;
          continue;
        }
      }
      if (this.state === State.Data) {
        const take = Math.min(this.size, len - i);
        this.size -= take;
        if (this.size === 0) this.state = State.DataCr;
        if (!onData(buf.subarray(i, i + take), undefined)) return -2;
        i += take;
        continue;
      }
      if (this.state === State.Trailer) {
        const line = this.trailerPiece(buf, i);
        if (line < 0) return -1;
        i = line;
        continue;
      }
      const c = buf[i++] as number;
      if (this.step(c)) return i;
    }
    return -1;
  }

  /**
   * A whole frame at `at` with no extension: hands it over and returns the offset after it; `at`
   * itself when the frame is not whole in `buf` (or is the last chunk): the byte-wise states go on.
   */
  private wholeFrame(buf: Buffer, at: number, onData: ChunkData): number {
    let i = at;
    let size = 0;
    for (let digit = hexValue(buf[i] as number); digit >= 0; digit = hexValue(buf[i] as number)) {
      if (i - at === MAX_SIZE_DIGITS) return at;
      size = size * 16 + digit;
      i++;
    }
    if (size === 0 || buf[i] !== CR || buf[i + 1] !== LF) return at;
    const dataStart = i + 2;
    const dataEnd = dataStart + size;
    if (dataEnd + 2 > buf.length || buf[dataEnd] !== CR || buf[dataEnd + 1] !== LF) return at;
    if (!onData(buf.subarray(dataStart, dataEnd), buf.subarray(at, dataEnd + 2))) return -2;
    return dataEnd + 2;
  }

  /** One framing byte (not data, not trailers); true when it ended the body. */
  private step(c: number): boolean {
    switch (this.state) {
      case State.Size:
        return this.sizeByte(c);
      case State.Extension:
        if (c === CR) this.state = State.SizeLf;
        else if (c === LF || ++this.extensionBytes > MAX_EXTENSION_BYTES)
          throw badResponse("chunk extension");
        return false;
      case State.SizeLf:
        if (c !== LF) throw badResponse("chunk size line not ended by CRLF");
        this.state = this.size === 0 ? State.Trailer : State.Data;
        this.digits = 0;
        this.extensionBytes = 0;
        return false;
      case State.DataCr:
        if (c !== CR) throw badResponse("chunk data longer than its size");
        this.state = State.DataLf;
        return false;
      case State.DataLf:
        if (c !== LF) throw badResponse("chunk data not ended by CRLF");
        this.state = State.Size;
        return false;
      case State.TrailerLf:
        if (c !== LF) throw badResponse("trailer line not ended by CRLF");
        return this.endTrailerLine();
      default:
        throw new Error(`chunked decoder: unexpected state ${this.state}`);
    }
  }

  private sizeByte(c: number): boolean {
    const digit = hexValue(c);
    if (digit >= 0) {
      if (++this.digits > MAX_SIZE_DIGITS) throw badResponse("chunk size too large");
      this.size = this.size * 16 + digit;
      return false;
    }
    if (this.digits === 0) throw badResponse("chunk size is not hexadecimal");
    if (c === CR) this.state = State.SizeLf;
    else if (c === 0x3b || c === 0x20 || c === 0x09) this.state = State.Extension;
    else throw badResponse("chunk size is not hexadecimal");
    return false;
  }

  /** Reads trailer bytes from `at` up to a CR; the offset after it, or -1 when `buf` ran out first. */
  private trailerPiece(buf: Buffer, at: number): number {
    const cr = buf.indexOf(CR, at);
    const end = cr < 0 ? buf.length : cr;
    const lf = buf.indexOf(LF, at);
    if (lf >= 0 && lf < end) throw badResponse("bare LF in trailers");
    this.trailerBytes += end - at;
    if (this.trailerBytes > MAX_TRAILER_BYTES) throw badResponse(`trailers over ${MAX_TRAILER_BYTES} bytes`);
    if (end > at) this.trailerLine.push(buf.subarray(at, end));
    if (cr < 0) return -1;
    this.state = State.TrailerLf;
    return cr + 1;
  }

  /** The empty line ends the body; any other line is a trailer field. */
  private endTrailerLine(): boolean {
    if (this.trailerLine.length === 0) return true;
    addField(this.trailers, Buffer.concat(this.trailerLine).toString("latin1"));
    this.trailerLine = [];
    this.state = State.Trailer;
    return false;
  }
}
