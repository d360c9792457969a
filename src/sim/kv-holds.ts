/**
 * The prefill side of a P/D transfer: KV a finished prefill leg keeps for a remote decode, and the
 * side channel (vLLM's NIXL side-channel port) a decode pulls it through. A hold ends when a decode
 * pulls it or when the abort timeout (vLLM's `VLLM_NIXL_ABORT_REQUEST_TIMEOUT`, engine time) frees
 * it, so held blocks always return to the pool.
 *
 * Side channel, one route: `POST /kv/pull {"engine_id", "block_ids", "request_id"?}` →
 * 200 `{"num_tokens", "prompt_digest", "block_ids"}` (the hold is released: the KV has been read);
 * 409 when `engine_id` is not this server's (stale metadata, e.g. after a restart); 404 when no
 * hold has these block ids (never made, already pulled, or expired).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Engine } from "../engine/index.ts";
import { promptDigest } from "../engine/index.ts";

/** One prefill's KV waiting for its decode. */
interface Hold {
  /** The engine's and vLLM's request id (`remote_request_id`). */
  requestId: string;
  blockIds: readonly number[];
  numTokens: number;
  digest: string;
  cancelTimer: () => void;
}

/** What a pull request answers: a status and a JSON body. */
export interface PullAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** Counters of the holds, for /metrics. */
export interface HoldCounters {
  /** Holds freed by the abort timeout, no decode having pulled them. */
  expired: number;
  /** Holds a decode pulled. */
  pulled: number;
  /** Pulls refused (stale engine id, unknown blocks). */
  refused: number;
}

/** The holds of one server. */
export class KvHolds {
  private readonly holds = new Map<string, Hold>();
  readonly counters: HoldCounters = { expired: 0, pulled: 0, refused: 0 };

  /**
   * @param abortTimeoutWallMs wall ms a hold lives unpulled (the abort timeout over `--speed`).
   * @param schedule runs `fn` after `ms` wall ms; returns a cancel.
   */
  constructor(
    private readonly engine: Engine,
    readonly engineId: string,
    private readonly abortTimeoutWallMs: number,
    private readonly schedule: (ms: number, fn: () => void) => () => void = nodeSchedule,
  ) {}

  /** Holds the blocks of the finished request `requestId`; returns their ids. */
  hold(requestId: string, prompt: Uint32Array): readonly number[] {
    const blockIds = [...(this.engine.heldBlockIds(requestId) ?? [])];
    const key = holdKey(blockIds);
    const cancelTimer = this.schedule(this.abortTimeoutWallMs, () => {
      if (this.release(key)) this.counters.expired++;
    });
    const digest = promptDigest(prompt);
    this.holds.set(key, {
      requestId,
      blockIds,
      numTokens: prompt.length,
      digest,
      cancelTimer,
    });
    return blockIds;
  }

  /** Answers one pull; a successful pull releases the hold. */
  pull(body: unknown): PullAnswer {
    const req = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
    if (req.engine_id !== this.engineId) {
      this.counters.refused++;
      const error = `engine_id ${JSON.stringify(req.engine_id)} is not this engine (${this.engineId}): stale transfer metadata`;
      return { status: 409, body: { error } };
    }
    const ids = Array.isArray(req.block_ids) ? req.block_ids : [];
    const hold = this.holds.get(holdKey(ids));
    if (!hold || (typeof req.request_id === "string" && req.request_id !== hold.requestId)) {
      this.counters.refused++;
      return { status: 404, body: { error: "no KV is held for these block ids" } };
    }
    this.release(holdKey(ids));
    this.counters.pulled++;
    const answer = { num_tokens: hold.numTokens, prompt_digest: hold.digest, block_ids: hold.blockIds };
    return { status: 200, body: answer };
  }

  /** Frees every hold (server shutdown). */
  clear(): void {
    for (const key of [...this.holds.keys()]) this.release(key);
  }

  private release(key: string): boolean {
    const hold = this.holds.get(key);
    if (!hold) return false;
    this.holds.delete(key);
    hold.cancelTimer();
    this.engine.releaseHeld(hold.requestId);
    return true;
  }
}

function holdKey(blockIds: readonly unknown[]): string {
  return blockIds.join(",");
}

function nodeSchedule(ms: number, fn: () => void): () => void {
  const handle = setTimeout(fn, ms);
  handle.unref();
  return () => clearTimeout(handle);
}

/** Most bytes a pull request body may have. */
const MAX_PULL_BODY_BYTES = 1024 * 1024;

/** Starts the side channel on `host:port` (0 = any free port); resolves with the server and port. */
export async function startSideChannel(
  holds: KvHolds,
  host: string,
  port: number,
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const reply = (a: PullAnswer) => {
      res.writeHead(a.status, { "content-type": "application/json" });
      res.end(JSON.stringify(a.body));
    };
    if (req.method !== "POST" || req.url !== "/kv/pull")
      return reply({ status: 404, body: { error: "not found" } });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_PULL_BODY_BYTES) req.destroy();
      else chunks.push(c);
    });
    req.on("end", () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return reply({ status: 400, body: { error: "body is not JSON" } });
      }
      reply(holds.pull(body));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}
