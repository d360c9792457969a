/**
 * Publishes the engine's KV events as vLLM's ZmqEventPublisher does (shared/reference/llm-d.md §4.1):
 * one EventBatch per engine call that produced events, on a PUB socket, as three frames
 * `[topic, seq (uint64 big-endian, 0, 1, … per publisher), msgpack([ts seconds, events, dp_rank])]`,
 * and a ROUTER replay socket that resends the last `bufferSteps` batches from a requested sequence.
 *
 * The engine never waits on ZeroMQ: `publish` encodes, numbers and buffers the batch synchronously and
 * hands it to a send pump bounded by `maxQueueSize` (full: the batch is not sent live, but its sequence
 * number is spent and it stays replayable, so a subscriber sees a gap and asks for a replay). The PUB
 * socket drops per subscriber at `hwm`, as ZeroMQ PUB sockets do.
 */
import { Encoder } from "@msgpack/msgpack";
import { Publisher, Router } from "zeromq";
import type { KvEvent } from "../engine/types.ts";
import type { KvEventsConfig } from "./kv-events-config.ts";
import { BLOCK_REMOVED_FIELDS, BLOCK_STORED_FIELDS } from "../api/kv-event-wire.ts";

/** How events are encoded: vLLM's positional arrays (msgspec array_like) or maps tagged under "type". */
export type KvEventEncoding = "array" | "map";

/** Publisher settings (see src/sim/kv-events-config.ts for where they come from). */
export interface KvPublisherOptions
  extends Pick<KvEventsConfig, "endpoint" | "replayEndpoint" | "bufferSteps" | "hwm" | "maxQueueSize"> {
  /** Topic frame, already resolved. */
  topic: string;
  encoding: KvEventEncoding;
  /** `data_parallel_rank` of every batch. */
  dpRank?: number;
  /** LoRA adapter name → vLLM-style integer lora_id (absent adapters get null). */
  loraIds?: ReadonlyMap<string, number>;
  /** Wall clock in ms (tests may pin it). */
  nowMs?: () => number;
  /**
   * Fault injection: batches with these sequence numbers are kept for replay but never sent live,
   * so a subscriber sees a gap (`LLMD_KV_EVENTS_SKIP_SEQS`, see `skipSeqsFromEnv`).
   */
  skipLiveSeqs?: ReadonlySet<bigint>;
}

/** `LLMD_KV_EVENTS_SKIP_SEQS=3,7` → {3n, 7n}: the test hook of `KvPublisherOptions.skipLiveSeqs`. */
export function skipSeqsFromEnv(env: NodeJS.ProcessEnv = process.env): ReadonlySet<bigint> {
  const text = env.LLMD_KV_EVENTS_SKIP_SEQS ?? "";
  return new Set(
    text
      .split(",")
      .map((s) => s.trim())
      .filter((s) => /^\d+$/.test(s))
      .map((s) => BigInt(s)),
  );
}

/** Replay's end-of-replay sequence number: all ones. */
export const END_OF_REPLAY_SEQ = 0xffff_ffff_ffff_ffffn;

/** How long a replay send may wait on a slow DEALER before that replay is abandoned, ms. */
const REPLAY_SEND_TIMEOUT_MS = 5000;

/** Counters of what the publisher did. */
export interface KvPublisherStats {
  /** Batches numbered (the next sequence number). */
  batches: number;
  /** Batches handed to the PUB socket. */
  sent: number;
  /** Batches not sent live because the send queue was full. */
  dropped: number;
  /** Replay requests answered. */
  replays: number;
}

/** Sequence number as an 8-byte big-endian frame. */
export function seqFrame(seq: bigint): Buffer {
  const b = Buffer.allocUnsafe(8);
  b.writeBigUInt64BE(seq);
  return b;
}

/** A running publisher: `publish` from the engine's listener, `close` on shutdown. */
export class KvEventPublisher {
  private readonly encoder = new Encoder({ useBigInt64: true });
  private readonly topicFrame: Buffer;
  private readonly replayRing: { seq: bigint; payload: Buffer }[] = [];
  /** Index of the oldest batch in `replayRing` once it is full. */
  private ringStart = 0;
  private readonly queue: { seq: Buffer; payload: Buffer }[] = [];
  private pumping = false;
  private closed = false;
  private nextSeq = 0n;
  private readonly counters: KvPublisherStats = { batches: 0, sent: 0, dropped: 0, replays: 0 };
  private readonly nowMs: () => number;

  private constructor(
    private readonly options: KvPublisherOptions,
    private readonly pub: Publisher,
    private readonly router: Router | null,
    /** Address the PUB socket bound or connected to (a wildcard port resolved). */
    readonly endpoint: string,
    /** Address the ROUTER bound, or null. */
    readonly replayEndpoint: string | null,
  ) {
    this.topicFrame = Buffer.from(options.topic, "utf8");
    this.nowMs = options.nowMs ?? (() => performance.timeOrigin + performance.now());
    if (router) void this.serveReplays(router);
  }

  /** Opens the sockets; rejects (sockets closed) when an endpoint cannot be bound or connected. */
  static async start(options: KvPublisherOptions): Promise<KvEventPublisher> {
    const pub = new Publisher({ sendHighWaterMark: options.hwm, linger: 0 });
    let router: Router | null = null;
    try {
      let endpoint = options.endpoint;
      if (isBindEndpoint(endpoint)) {
        await pub.bind(endpoint);
        endpoint = pub.lastEndpoint ?? endpoint;
      } else pub.connect(endpoint);
      let replayEndpoint: string | null = null;
      if (options.replayEndpoint !== null) {
        // Mandatory: a replay waits (bounded by sendTimeout) for a slow DEALER instead of silently
        // dropping batches at the high-water mark, which would leave holes in the replayed range.
        router = new Router({ mandatory: true, sendTimeout: REPLAY_SEND_TIMEOUT_MS, linger: 0 });
        await router.bind(options.replayEndpoint);
        replayEndpoint = router.lastEndpoint ?? options.replayEndpoint;
      }
      return new KvEventPublisher(options, pub, router, endpoint, replayEndpoint);
    } catch (err) {
      pub.close();
      router?.close();
      throw err;
    }
  }

  /** What was published so far. */
  stats(): KvPublisherStats {
    return { ...this.counters };
  }

  /** Numbers, encodes, keeps for replay and queues one batch; never waits. */
  publish(events: readonly KvEvent[]): void {
    if (this.closed || events.length === 0) return;
    const seq = this.nextSeq++;
    this.counters.batches++;
    const payload = this.encodeBatch(events);
    this.remember(seq, payload);
    if (this.queue.length >= this.options.maxQueueSize || this.options.skipLiveSeqs?.has(seq)) {
      this.counters.dropped++;
      return;
    }
    this.queue.push({ seq: seqFrame(seq), payload });
    if (!this.pumping) void this.pump();
  }

  /** Closes both sockets at once (linger 0: unsent batches are discarded). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    this.pub.close();
    this.router?.close();
  }

  /** `[ts, events, dp_rank]`; ts is written as float64 by hand, since msgpack would make a whole second an int. */
  private encodeBatch(events: readonly KvEvent[]): Buffer {
    const wire = events.map((e) => this.wireEvent(e));
    const body = this.encoder.encode(wire);
    const rank = this.encoder.encode(this.options.dpRank ?? 0);
    const out = Buffer.allocUnsafe(1 + 9 + body.length + rank.length);
    out[0] = 0x93; // fixarray of 3
    out[1] = 0xcb; // float64
    out.writeDoubleBE(this.nowMs() / 1000, 2);
    out.set(body, 10);
    out.set(rank, 10 + body.length);
    return out;
  }

  /** One event in vLLM's field order: the tag, then BlockStored's 11 fields, BlockRemoved's 3, AllBlocksCleared's none. */
  private wireEvent(e: KvEvent): unknown {
    const map = this.options.encoding === "map";
    switch (e.type) {
      case "BlockStored": {
        const loraId = e.lora === null ? null : (this.options.loraIds?.get(e.lora) ?? null);
        const fields = [
          e.blockHashes,
          e.parentBlockHash,
          e.tokenIds,
          e.blockSize,
          loraId,
          e.medium,
          e.lora,
          null, // extra_keys
          null, // group_idx
          null, // kv_cache_spec_kind
          null, // kv_cache_spec_sliding_window
        ];
        return map ? toMap("BlockStored", BLOCK_STORED_FIELDS, fields) : ["BlockStored", ...fields];
      }
      case "BlockRemoved": {
        const fields = [e.blockHashes, e.medium, null];
        return map ? toMap("BlockRemoved", BLOCK_REMOVED_FIELDS, fields) : ["BlockRemoved", ...fields];
      }
      case "AllBlocksCleared":
        return map ? { type: "AllBlocksCleared" } : ["AllBlocksCleared"];
    }
  }

  private remember(seq: bigint, payload: Buffer): void {
    const cap = this.options.bufferSteps;
    if (cap === 0) return;
    if (this.replayRing.length < cap) this.replayRing.push({ seq, payload });
    else {
      this.replayRing[this.ringStart] = { seq, payload };
      this.ringStart = (this.ringStart + 1) % cap;
    }
  }

  /** Kept batches, oldest first. */
  private kept(): { seq: bigint; payload: Buffer }[] {
    return [...this.replayRing.slice(this.ringStart), ...this.replayRing.slice(0, this.ringStart)];
  }

  /** Sends queued batches one at a time (zeromq allows one pending send per socket). */
  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (!this.closed && this.queue.length > 0) {
        const next = this.queue.shift()!;
        try {
          await this.pub.send([this.topicFrame, next.seq, next.payload]);
          this.counters.sent++;
        } catch {
          if (this.closed) return;
          this.counters.dropped++;
        }
      }
    } finally {
      this.pumping = false;
    }
  }

  /**
   * Answers replay requests one at a time: a DEALER sends `[empty, start seq (8 bytes BE)]` and gets,
   * after the empty delimiter, `[topic, seq, payload]` for every kept batch with seq ≥ start, then
   * `[empty, 0xFFFFFFFFFFFFFFFF, empty]`. Malformed requests are ignored.
   */
  private async serveReplays(router: Router): Promise<void> {
    const empty = Buffer.alloc(0);
    const end = seqFrame(END_OF_REPLAY_SEQ);
    try {
      for await (const frames of router) {
        if (frames.length !== 3 || frames[1]!.length !== 0 || frames[2]!.length !== 8) continue;
        const [identity, , startFrame] = frames as [Buffer, Buffer, Buffer];
        const start = startFrame.readBigUInt64BE(0);
        this.counters.replays++;
        try {
          for (const batch of this.kept()) {
            if (batch.seq < start) continue;
            await router.send([identity, empty, this.topicFrame, seqFrame(batch.seq), batch.payload]);
          }
          await router.send([identity, empty, empty, end, empty]);
        } catch {
          // The DEALER went away or stopped reading: abandon its replay, keep serving others.
          if (this.closed) return;
        }
      }
    } catch {
      // The socket was closed while receiving.
    }
  }
}

/** The map encoding of an event's `values`, named by the leading `names` (older vLLM sends fewer). */
function toMap(type: string, names: readonly string[], values: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = { type };
  for (let i = 0; i < values.length; i++) out[names[i]!] = values[i];
  return out;
}

/** True when an endpoint names a local address to bind rather than a peer to connect to. */
export function isBindEndpoint(endpoint: string): boolean {
  if (/^(ipc|inproc):\/\//.test(endpoint)) return true;
  const m = /^[a-z]+:\/\/(.*)$/.exec(endpoint);
  if (!m) return false;
  const address = m[1]!;
  return address.includes("*") || /^(0\.0\.0\.0|\[::\]|::):/.test(address);
}
