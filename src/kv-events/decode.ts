/**
 * Decoding of vLLM's (and SGLang's) KV-event messages (reference §4.1, §4.3): the topic
 * `kv@<pod>@<model>`, and the msgpack `EventBatch` `[ts, events, data_parallel_rank?]` whose events
 * are positional arrays `[tag, fields…]` or maps tagged under `"type"`. Block hashes are ints or
 * bytes (the last 8 bytes, big-endian); both become unsigned 64-bit bigints.
 */
import { Decoder } from "@msgpack/msgpack";
import type { IndexKvEvent } from "../kv-index/precise-index.ts";
import { BLOCK_REMOVED_FIELDS, BLOCK_STORED_FIELDS } from "../api/kv-event-wire.ts";

/** Which engine publishes: SGLang sends positional events only. */
export type EngineType = "vllm" | "sglang";

/** One decoded batch. */
export interface DecodedBatch {
  /** Publisher's timestamp, seconds. */
  ts: number;
  events: IndexKvEvent[];
  dpRank: number;
  /** Events dropped as malformed, unknown or not prefix-indexable. */
  skipped: number;
}

/** The parts of a topic: `kv@<pod>@<model>`, or the whole topic as the pod when it has another shape. */
export function parseTopic(topic: string): { pod: string; model: string } {
  const parts = topic.split("@");
  return parts.length === 3 ? { pod: parts[1]!, model: parts[2]! } : { pod: topic, model: "" };
}

const decoder = new Decoder({ useBigInt64: true });

/** Decodes one batch payload; throws on a payload that is not an EventBatch. */
export function decodeBatch(payload: Uint8Array, engine: EngineType = "vllm"): DecodedBatch {
  const batch = decoder.decode(payload);
  if (!Array.isArray(batch) || typeof toNumber(batch[0]) !== "number" || !Array.isArray(batch[1]))
    throw new Error("not an EventBatch [ts, events, dp_rank?]");
  const rank = batch[2] === undefined || batch[2] === null ? 0 : toNumber(batch[2]);
  const out: DecodedBatch = { ts: toNumber(batch[0])!, events: [], dpRank: rank ?? 0, skipped: 0 };
  for (const raw of batch[1] as unknown[]) {
    const event = decodeEvent(raw, engine);
    if (event) out.events.push(event);
    else out.skipped++;
  }
  return out;
}

/** A block hash (int, negative int64, or bytes) as an unsigned 64-bit bigint. */
export function hashToU64(hash: unknown): bigint | undefined {
  if (typeof hash === "bigint") return BigInt.asUintN(64, hash);
  if (typeof hash === "number" && Number.isInteger(hash)) return BigInt.asUintN(64, BigInt(hash));
  if (hash instanceof Uint8Array) {
    let v = 0n;
    for (let i = Math.max(0, hash.length - 8); i < hash.length; i++) v = (v << 8n) | BigInt(hash[i]!);
    return v;
  }
  return undefined;
}

type Fields = Record<string, unknown>;

function decodeEvent(raw: unknown, engine: EngineType): IndexKvEvent | undefined {
  let tag: unknown;
  let values: unknown[];
  if (Array.isArray(raw)) [tag, ...values] = raw;
  else if (engine === "vllm" && raw !== null && typeof raw === "object" && "type" in raw) {
    const map = raw as Fields;
    tag = map.type;
    const names = tag === "BlockStored" ? BLOCK_STORED_FIELDS : BLOCK_REMOVED_FIELDS;
    values = names.map((n) => map[n]);
  } else return undefined;
  if (tag === "AllBlocksCleared") return { type: "AllBlocksCleared" };
  if (tag === "BlockStored") return blockStored(named(BLOCK_STORED_FIELDS, values));
  if (tag === "BlockRemoved") return blockRemoved(named(BLOCK_REMOVED_FIELDS, values));
  return undefined;
}

function named(names: readonly string[], values: unknown[]): Fields {
  const out: Fields = {};
  for (let i = 0; i < names.length; i++) out[names[i]!] = values[i];
  return out;
}

function blockStored(f: Fields): IndexKvEvent | undefined {
  const hashes = hashList(f.block_hashes);
  const blockSize = toNumber(f.block_size);
  const tokens = f.token_ids;
  if (!hashes || !Array.isArray(tokens) || blockSize === undefined || blockSize < 1) return undefined;
  if (!tokens.every((t) => typeof t === "number")) return undefined;
  // Blocks carrying extra keys (multimodal hashes, a cache salt) hash differently from plain tokens.
  if (Array.isArray(f.extra_keys) && f.extra_keys.some((k) => k !== null)) return undefined;
  if (!prefixIndexable(f, tokens.length, blockSize, hashes.length)) return undefined;
  const parent =
    f.parent_block_hash === null || f.parent_block_hash === undefined ? null : hashToU64(f.parent_block_hash);
  if (parent === undefined) return undefined;
  return {
    type: "BlockStored",
    blockHashes: hashes,
    parentBlockHash: parent,
    tokenIds: tokens as number[],
    blockSize,
    lora: typeof f.lora_name === "string" ? f.lora_name : null,
    medium: typeof f.medium === "string" ? f.medium : null,
  };
}

/**
 * llm-d's rule for a grouped (hybrid-allocator) event: only a full-attention group whose tokens
 * fill exactly its blocks is indexable; sliding-window and state groups are not.
 */
function prefixIndexable(f: Fields, tokens: number, blockSize: number, blocks: number): boolean {
  if (f.group_idx === null || f.group_idx === undefined) return true;
  const kind = typeof f.kv_cache_spec_kind === "string" ? f.kv_cache_spec_kind.toLowerCase() : "";
  if (kind !== "" && !kind.includes("full")) return false;
  if (f.kv_cache_spec_sliding_window !== null && f.kv_cache_spec_sliding_window !== undefined) return false;
  return tokens % blockSize === 0 && tokens / blockSize === blocks;
}

function blockRemoved(f: Fields): IndexKvEvent | undefined {
  const hashes = hashList(f.block_hashes);
  if (!hashes) return undefined;
  return {
    type: "BlockRemoved",
    blockHashes: hashes,
    medium: typeof f.medium === "string" ? f.medium : null,
  };
}

function hashList(raw: unknown): bigint[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  const out: bigint[] = new Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const h = hashToU64(raw[i]);
    if (h === undefined) return undefined;
    out[i] = h;
  }
  return out;
}

function toNumber(v: unknown): number | undefined {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  return undefined;
}
