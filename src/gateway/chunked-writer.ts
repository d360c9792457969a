/**
 * Writes a relayed stream's body to the client's socket as HTTP/1.1 chunked frames: one buffer (the
 * size line, the data, CRLF) and one socket write per flush, or, for a lone chunk whose model
 * server's frame came whole (src/http1), that frame as it is. node:http's `res.write` writes the
 * same frame as four corked pieces (a latin1 size string, CRLF, the data, CRLF), uncorked into one
 * `writev` on the next tick; a relayed token needs none of that. node:http still writes the head
 * before and the last chunk (`res.end()`) after, so the bytes on the socket are what `res.write`
 * would have sent.
 */
import { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { ClientSink } from "./types.ts";

const CRLF = 0x0d0a;

/** Chunked frames straight to one response's socket. */
export class ChunkedWriter {
  constructor(private readonly socket: Socket) {}

  /**
   * Writes `chunks` (`bytes` long together, > 0) as one chunk frame; false when the socket is full
   * (wait for {@link onDrain}).
   */
  write(chunks: readonly Buffer[], bytes: number): boolean {
    const size = bytes.toString(16);
    const frame = Buffer.allocUnsafe(size.length + bytes + 4);
    let at = frame.write(size, 0, "latin1");
    at = frame.writeUInt16BE(CRLF, at);
    for (const chunk of chunks) at += chunk.copy(frame, at);
    frame.writeUInt16BE(CRLF, at);
    return this.socket.write(frame);
  }

  /** Writes `frame`, a whole chunk frame as a model server sent it, as it is; false when the socket is full. */
  writeFrame(frame: Buffer): boolean {
    return this.socket.write(frame);
  }

  /** `listener` runs once, when the socket next drains. */
  onDrain(listener: () => void): void {
    this.socket.once("drain", listener);
  }

  offDrain(listener: () => void): void {
    this.socket.off("drain", listener);
  }
}

/**
 * A writer for `sink` when it is a node:http response whose head went out with chunked encoding
 * on its own socket; undefined otherwise (a translating sink, HTTP/1.0, a pipelined response
 * waiting for its turn), where the caller writes through `sink.write`.
 */
export function chunkedWriterFor(sink: ClientSink): ChunkedWriter | undefined {
  if (!(sink instanceof ServerResponse) || !sink.headersSent || !sink.chunkedEncoding) return undefined;
  const socket = sink.socket;
  // Bytes node:http still holds for this response (its head, not yet on the socket) go first.
  if (!socket || socket.destroyed || sink.writableLength !== socket.writableLength) return undefined;
  return new ChunkedWriter(socket);
}
