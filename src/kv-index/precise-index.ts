/**
 * The precise prefix index (reference §4.2): what each engine reports holding, from its KV events.
 *
 * Dual keys. The scoring side is keyed by request keys (`request-keys.ts`), computed by the router
 * from its tokens. A `BlockStored` event carries the blocks' token ids, so the index recomputes the
 * request keys from them and remembers, per pod, each engine key (the engine's own block hash) with
 * the request keys it completes. Engine and router may therefore differ in hash seed, algorithm and
 * block size: an engine block that ends inside a request block leaves the tokens since the last full
 * request block as its tail, and the next engine block continues from there; an engine block larger
 * than a request block completes several. `BlockRemoved` resolves engine keys back to request keys.
 *
 * Each (request key, pod) holder carries the device tiers (`medium`: GPU, CPU, …) holding it; a match
 * weighs a block by its best tier. A routing decision may add speculative holders that count as the
 * first tier until `speculativeTtlMs` passes or an event confirms them. Memory is bounded: past
 * `maxBytes` (estimated), the least recently stored engine blocks are forgotten with their holders.
 *
 * Pods are opaque strings (the router uses endpoint keys, one per data-parallel rank). The index
 * knows no sockets or clocks: the router's subscriber and the fleet simulator both call `apply`.
 */
import { KeyTable } from "./key-table.ts";
import { blockDerivation, foldKey, type Key64, RequestKeyHasher } from "./request-keys.ts";

/** A KV event as the index applies it: the engine's `KvEvent` and decoded wire events both fit. */
export type IndexKvEvent =
  | {
      type: "BlockStored";
      blockHashes: readonly bigint[];
      parentBlockHash: bigint | null;
      tokenIds: ArrayLike<number>;
      blockSize: number;
      /** LoRA adapter name: it replaces the model name in the chain's root. */
      lora: string | null;
      /** Device tier, e.g. "GPU"; null means GPU. */
      medium: string | null;
    }
  | { type: "BlockRemoved"; blockHashes: readonly bigint[]; medium: string | null }
  | { type: "AllBlocksCleared" };

/** A device tier's weight in a match (llm-d's `kvCacheBackendConfigs` entry). */
export interface TierWeight {
  name: string;
  weight: number;
}

/** llm-d's default tier weights. */
export const DEFAULT_TIERS: readonly TierWeight[] = [
  { name: "gpu", weight: 1.0 },
  { name: "cpu", weight: 0.8 },
];

/** Index configuration. */
export interface PreciseIndexOptions {
  /** Tokens per request block. */
  blockSizeTokens: number;
  /** Seed of the request-key chain (llm-d's `hashSeed`). */
  hashSeed?: string;
  /** Tier weights; the first is the tier of speculative entries and of events without a medium. */
  tiers?: readonly TierWeight[];
  /** Estimated memory budget in bytes. */
  maxBytes: number;
  /** Lifetime of a speculative entry, ms. */
  speculativeTtlMs: number;
}

/** What the index holds and did. */
export interface PreciseIndexStats {
  /** Distinct request keys held by at least one pod. */
  keys: number;
  /** (request key, pod) holders. */
  holders: number;
  /** Engine blocks remembered, over all pods. */
  engineBlocks: number;
  /** Estimated bytes used. */
  bytes: number;
  /** Engine blocks stored / removed by events. */
  storedBlocks: number;
  removedBlocks: number;
  /** Stored blocks dropped because their parent block was unknown (missed or evicted). */
  orphanBlocks: number;
  /** Engine blocks forgotten to stay within the byte budget. */
  evictedBlocks: number;
}

/** Per-request match: leading blocks held contiguously, and those blocks weighted by their best tier. */
export interface PreciseMatch {
  blocks: Int32Array;
  weighted: Float64Array;
}

// Estimated sizes of the index's objects (V8 object headers, fields, map and set slots).
const HOLDER_BYTES = 96;
/** A key's holder list and table slot, plus its derivation (two tables at ≤ 50% load, 24 bytes of arrays). */
const KEY_BYTES = 136;
const ENGINE_BLOCK_BYTES = 160;
const REF_BYTES = 8;
const TOKEN_BYTES = 4;
const MAX_TIERS = 16;
const EMPTY_TAIL = new Uint32Array(0);
const EMPTY_LIST: Holder[] = [];
const NO_DERIVATION = -1;

interface PodState {
  readonly key: string;
  readonly engine: Map<number, EngineBlock>;
  /** This pod's position in the `match` call under way, else −1. */
  column: number;
}

/** One pod holding one request key. */
interface Holder {
  readonly key: number;
  readonly pod: PodState;
  /** Bit per tier holding it (0: speculative or gone). */
  tiers: number;
  /** Speculative until this time, ms (meaningful while `tiers` is 0). */
  specUntil: number;
  alive: boolean;
}

/** One engine block of one pod, in the global LRU (`prev` older, `next` newer). */
interface EngineBlock {
  readonly pod: PodState;
  readonly engineKey: number;
  tiers: number;
  /** Request-key chain at the last full request block ending in or before this block. */
  readonly chain: Key64;
  /** Tokens after that request block, up to this block's end. */
  readonly tail: Uint32Array;
  /** Holders of the request blocks that end inside this block. */
  readonly owned: Holder[];
  readonly bytes: number;
  prev: EngineBlock | null;
  next: EngineBlock | null;
}

/** An event shows the pod holding `holder` on `tier`: no longer speculative. */
function confirm(holder: Holder, tier: number): void {
  holder.tiers |= tier;
  holder.specUntil = 0;
}

/** Engine block hash → the index's 53-bit engine key. */
function engineKey(hash: bigint): number {
  return Number(BigInt.asUintN(53, hash));
}

/** See the module comment. */
export class PreciseIndex {
  readonly hasher: RequestKeyHasher;
  /** Request key → its list in `holderLists` (typed open addressing: no boxed 53-bit keys). */
  private readonly keyHolders = new KeyTable();
  private readonly holderLists: Holder[][] = [];
  private readonly freeLists: number[] = [];
  /** Derivation digest (`blockDerivation` of parent key and tokens) → list of the key it derives. */
  private readonly derived = new KeyTable();
  /** Per list: its 64-bit request key, the parent's folded key, the derivation digest (or NO_DERIVATION). */
  private listHi = new Uint32Array(1024);
  private listLo = new Uint32Array(1024);
  private listParent = new Float64Array(1024);
  private listDerivation = new Float64Array(1024);
  /** Scratch: a parent's tail followed by one engine block's tokens. */
  private joined = new Uint32Array(256);
  private readonly tierMaskWeight = new Float64Array(1 << MAX_TIERS).fill(-1);
  private readonly pods = new Map<string, PodState>();
  private readonly tierIndex = new Map<string, number>();
  private readonly tierWeights: number[] = [];
  /** Speculative insertions in expiry order (one TTL for all), with their expiry times. */
  private readonly specHolders: Holder[] = [];
  private readonly specUntils: number[] = [];
  private specHead = 0;
  private oldest: EngineBlock | null = null;
  private newest: EngineBlock | null = null;
  private holderCount = 0;
  private engineBlockCount = 0;
  private readonly counters = {
    bytes: 0,
    storedBlocks: 0,
    removedBlocks: 0,
    orphanBlocks: 0,
    evictedBlocks: 0,
  };

  constructor(private readonly options: PreciseIndexOptions) {
    this.hasher = new RequestKeyHasher(options.blockSizeTokens, options.hashSeed ?? "");
    for (const tier of options.tiers ?? DEFAULT_TIERS) this.addTier(tier.name, tier.weight);
  }

  /** Counts and sizes. */
  stats(): PreciseIndexStats {
    return {
      keys: this.keyHolders.size,
      holders: this.holderCount,
      engineBlocks: this.engineBlockCount,
      ...this.counters,
    };
  }

  /**
   * Request keys of `tokens` for `model` (full blocks only, at most `maxBlocks`). FNV-64a over CBOR
   * costs about 35 ns a token, so a block whose key the index holds, derived from the same parent
   * key and tokens, gets it by a fast digest (`blockDerivation`, ~1 ns a token) and a lookup: a
   * prompt extending one the index knows (the next turn of a conversation, a prompt an engine
   * reported) pays CBOR-FNV only for its new blocks.
   */
  requestKeys(tokens: ArrayLike<number>, model: string, maxBlocks = Number.POSITIVE_INFINITY): Float64Array {
    const size = this.hasher.blockSizeTokens;
    const out = new Float64Array(Math.min(maxBlocks, Math.floor(tokens.length / size)));
    const root = this.hasher.root(model);
    const chain: Key64 = { hi: root.hi, lo: root.lo };
    let parent = foldKey(chain.hi, chain.lo);
    for (let i = 0; i < out.length; i++) {
      this.nextKey(chain, parent, tokens, i * size);
      out[i] = parent = foldKey(chain.hi, chain.lo);
    }
    return out;
  }

  /**
   * Advances `chain` (whose folded key is `parent`) over the request block at `from`: the key the
   * index holds under the block's derivation digest when its parent is the same, else CBOR-FNV.
   * Returns the digest.
   */
  private nextKey(chain: Key64, parent: number, tokens: ArrayLike<number>, from: number): number {
    const derivation = blockDerivation(chain, tokens, from, this.hasher.blockSizeTokens);
    const list = this.derived.get(derivation);
    if (list >= 0 && this.listParent[list] === parent) {
      chain.hi = this.listHi[list]!;
      chain.lo = this.listLo[list]!;
    } else this.hasher.next(chain, tokens, from, chain);
    return derivation;
  }

  /** Records how the held key `chain` was derived, so `nextKey` finds it again. */
  private noteDerivation(chain: Key64, parent: number, derivation: number): void {
    const list = this.keyHolders.get(foldKey(chain.hi, chain.lo));
    if (list < 0 || this.listDerivation[list] !== NO_DERIVATION) return;
    this.listHi[list] = chain.hi;
    this.listLo[list] = chain.lo;
    this.listParent[list] = parent;
    this.listDerivation[list] = derivation;
    this.derived.set(derivation, list);
  }

  /** Applies one batch of `podKey`'s events, in order; `model` is the engine's served model. */
  apply(events: readonly IndexKvEvent[], podKey: string, model: string, nowMs: number): void {
    this.sweep(nowMs);
    for (const event of events) {
      if (event.type === "BlockStored") this.stored(event, this.podFor(podKey), model);
      else if (event.type === "BlockRemoved") this.removed(event.blockHashes, event.medium, podKey);
      else this.clearPod(podKey);
    }
    this.enforceBudget();
  }

  /** Forgets everything `podKey` holds (its engine was reset, or it left the pool). */
  clearPod(podKey: string): void {
    const pod = this.pods.get(podKey);
    if (!pod) return;
    for (const block of pod.engine.values()) this.dropEngineBlock(block);
    // Every live holder is owned by an engine block or is speculative: these are what is left.
    for (let i = this.specHead; i < this.specHolders.length; i++) {
      const holder = this.specHolders[i]!;
      if (holder.pod === pod) this.removeHolder(holder);
    }
    this.pods.delete(podKey);
  }

  /**
   * Marks `keys` as held by `podKey` until `nowMs + speculativeTtlMs` (a routing decision sent the
   * prompt there); an event confirming a key makes it a regular entry.
   */
  insertSpeculative(keys: Float64Array, podKey: string, nowMs: number): void {
    this.sweep(nowMs);
    const pod = this.podFor(podKey);
    const until = nowMs + this.options.speculativeTtlMs;
    for (let i = 0; i < keys.length; i++) {
      const holder = this.holderFor(keys[i]!, pod);
      if (holder.tiers !== 0) continue;
      holder.specUntil = until;
      this.specHolders.push(holder);
      this.specUntils.push(until);
    }
  }

  /**
   * For each of `podKeys`, the leading blocks of `keys` it holds contiguously (a live tier or an
   * unexpired speculative entry) and their sum of best-tier weights.
   */
  match(keys: Float64Array, podKeys: readonly string[], nowMs: number): PreciseMatch {
    return this.withColumns(podKeys, (blocks, weighted) => {
      for (let i = 0; i < keys.length && this.advance(keys[i]!, i, nowMs, blocks, weighted); i++);
    });
  }

  /**
   * `match` over the request keys of `tokens`, computing them only as far as some pod's match
   * reaches: `keys` are the blocks matched by any pod plus the first that none holds (none when no
   * pod is known), so a prompt nobody holds costs one key.
   */
  matchTokens(
    tokens: ArrayLike<number>,
    model: string,
    podKeys: readonly string[],
    nowMs: number,
  ): PreciseMatch & { keys: Float64Array } {
    const size = this.hasher.blockSizeTokens;
    const keys = new Float64Array(Math.floor(tokens.length / size));
    let count = 0;
    const matched = this.withColumns(podKeys, (blocks, weighted) => {
      const root = this.hasher.root(model);
      const chain: Key64 = { hi: root.hi, lo: root.lo };
      let parent = foldKey(chain.hi, chain.lo);
      while (count < keys.length) {
        this.nextKey(chain, parent, tokens, count * size);
        keys[count] = parent = foldKey(chain.hi, chain.lo);
        if (!this.advance(parent, count++, nowMs, blocks, weighted)) break;
      }
    });
    return { ...matched, keys: keys.subarray(0, count) };
  }

  /** Marks the known pods of `podKeys` with their positions (`column`) while `walk` runs. */
  private withColumns(
    podKeys: readonly string[],
    walk: (blocks: Int32Array, weighted: Float64Array) => void,
  ): PreciseMatch {
    const blocks = new Int32Array(podKeys.length);
    const weighted = new Float64Array(podKeys.length);
    const columns: PodState[] = [];
    for (let c = 0; c < podKeys.length; c++) {
      const pod = this.pods.get(podKeys[c]!);
      if (pod && pod.column < 0) {
        pod.column = c;
        columns.push(pod);
      }
    }
    if (columns.length > 0) walk(blocks, weighted);
    for (const pod of columns) pod.column = -1;
    return { blocks, weighted };
  }

  /** Extends by block `i` (key `key`) the runs of the marked pods that reached it; false when none did. */
  private advance(
    key: number,
    i: number,
    nowMs: number,
    blocks: Int32Array,
    weighted: Float64Array,
  ): boolean {
    const list = this.keyHolders.get(key);
    if (list < 0) return false;
    let advanced = false;
    for (const holder of this.holderLists[list]!) {
      const c = holder.pod.column;
      if (c < 0 || blocks[c] !== i) continue;
      const weight = this.weightOf(holder, nowMs);
      if (weight < 0) continue;
      blocks[c] = i + 1;
      weighted[c]! += weight;
      advanced = true;
    }
    return advanced;
  }

  private stored(event: Extract<IndexKvEvent, { type: "BlockStored" }>, pod: PodState, model: string): void {
    const tier = this.tierBit(event.medium);
    const { blockSize, tokenIds, blockHashes } = event;
    let chain: Key64;
    let tail: Uint32Array;
    if (event.parentBlockHash === null) {
      chain = this.hasher.root(event.lora ?? model);
      tail = EMPTY_TAIL;
    } else {
      const parent = pod.engine.get(engineKey(event.parentBlockHash));
      if (!parent) {
        this.counters.orphanBlocks += blockHashes.length;
        return;
      }
      chain = parent.chain;
      tail = parent.tail;
    }
    for (let i = 0; i < blockHashes.length; i++) {
      if (tokenIds.length < (i + 1) * blockSize) {
        this.counters.orphanBlocks += blockHashes.length - i;
        return;
      }
      const key = engineKey(blockHashes[i]!);
      let block = pod.engine.get(key);
      if (block) this.gainTier(block, tier);
      else block = this.newEngineBlock(pod, key, tier, chain, tail, tokenIds, i * blockSize, blockSize);
      this.counters.storedBlocks++;
      chain = block.chain;
      tail = block.tail;
    }
  }

  /** Extends the request-key chain over one engine block's tokens and remembers the block. */
  private newEngineBlock(
    pod: PodState,
    key: number,
    tier: number,
    parentChain: Key64,
    parentTail: Uint32Array,
    tokenIds: ArrayLike<number>,
    from: number,
    blockSize: number,
  ): EngineBlock {
    const size = this.hasher.blockSizeTokens;
    let tokens: ArrayLike<number> = tokenIds;
    let start = from;
    let length = blockSize;
    if (parentTail.length > 0) {
      length = parentTail.length + blockSize;
      if (this.joined.length < length) this.joined = new Uint32Array(length * 2);
      const joined = this.joined;
      joined.set(parentTail);
      for (let t = 0; t < blockSize; t++) joined[parentTail.length + t] = tokenIds[from + t]!;
      tokens = joined;
      start = 0;
    }
    const full = Math.floor(length / size);
    const chain: Key64 = { hi: parentChain.hi, lo: parentChain.lo };
    const owned: Holder[] = new Array(full);
    for (let j = 0; j < full; j++) {
      const parent = foldKey(chain.hi, chain.lo);
      const derivation = this.nextKey(chain, parent, tokens, start + j * size);
      const holder = this.holderFor(foldKey(chain.hi, chain.lo), pod);
      this.noteDerivation(chain, parent, derivation);
      confirm(holder, tier);
      owned[j] = holder;
    }
    const rest = length - full * size;
    const tail = rest === 0 ? EMPTY_TAIL : new Uint32Array(rest);
    for (let t = 0; t < rest; t++) tail[t] = tokens[start + full * size + t]!;
    const bytes = ENGINE_BLOCK_BYTES + full * REF_BYTES + rest * TOKEN_BYTES;
    const block: EngineBlock = {
      pod,
      engineKey: key,
      tiers: tier,
      chain,
      tail,
      owned,
      bytes,
      prev: null,
      next: null,
    };
    pod.engine.set(key, block);
    this.engineBlockCount++;
    this.counters.bytes += bytes;
    this.link(block);
    return block;
  }

  /** A block already known got another tier (an offload copy): it and its holders gain the bit. */
  private gainTier(block: EngineBlock, tier: number): void {
    block.tiers |= tier;
    for (const holder of block.owned) confirm(holder, tier);
    this.unlink(block);
    this.link(block);
  }

  private removed(hashes: readonly bigint[], medium: string | null, podKey: string): void {
    const pod = this.pods.get(podKey);
    if (!pod) return;
    const tier = this.tierBit(medium);
    for (const hash of hashes) {
      const block = pod.engine.get(engineKey(hash));
      if (!block) continue;
      this.counters.removedBlocks++;
      block.tiers &= ~tier;
      for (const holder of block.owned) this.clearTier(holder, tier);
      if (block.tiers === 0) this.dropEngineBlock(block);
    }
  }

  private clearTier(holder: Holder, tier: number): void {
    if (!holder.alive) return;
    holder.tiers &= ~tier;
    if (holder.tiers === 0 && holder.specUntil === 0) this.removeHolder(holder);
  }

  /** Forgets an engine block (its holders lose its tiers). */
  private dropEngineBlock(block: EngineBlock): void {
    if (block.pod.engine.get(block.engineKey) !== block) return;
    block.pod.engine.delete(block.engineKey);
    this.unlink(block);
    this.engineBlockCount--;
    this.counters.bytes -= block.bytes;
    for (const holder of block.owned) this.clearTier(holder, block.tiers);
  }

  private enforceBudget(): void {
    while (this.counters.bytes > this.options.maxBytes && this.oldest) {
      this.counters.evictedBlocks++;
      this.dropEngineBlock(this.oldest);
    }
  }

  /** Removes the speculative holders that expired and were not confirmed or renewed. */
  private sweep(nowMs: number): void {
    const until = this.specUntils;
    while (this.specHead < until.length && until[this.specHead]! <= nowMs) {
      const holder = this.specHolders[this.specHead]!;
      if (holder.specUntil === until[this.specHead]) {
        holder.specUntil = 0;
        if (holder.alive && holder.tiers === 0) this.removeHolder(holder);
      }
      this.specHead++;
    }
    if (this.specHead > 1024 && this.specHead * 2 > until.length) {
      until.splice(0, this.specHead);
      this.specHolders.splice(0, this.specHead);
      this.specHead = 0;
    }
  }

  private weightOf(holder: Holder, nowMs: number): number {
    const mask = holder.tiers;
    if (mask === 0) return holder.specUntil > nowMs ? this.tierWeights[0]! : -1;
    let weight = this.tierMaskWeight[mask]!;
    if (weight < 0) {
      weight = 0;
      for (let t = 0; t < this.tierWeights.length; t++)
        if (mask & (1 << t)) weight = Math.max(weight, this.tierWeights[t]!);
      this.tierMaskWeight[mask] = weight;
    }
    return weight;
  }

  /** Bit of a medium; null is the first tier; an unlisted medium gets the lowest listed weight. */
  private tierBit(medium: string | null): number {
    if (medium === null) return 1;
    const name = medium.toLowerCase();
    let index = this.tierIndex.get(name);
    if (index === undefined) {
      if (this.tierWeights.length >= MAX_TIERS) return 1 << (MAX_TIERS - 1);
      index = this.addTier(name, Math.min(...this.tierWeights));
    }
    return 1 << index;
  }

  private addTier(name: string, weight: number): number {
    const index = this.tierWeights.length;
    this.tierIndex.set(name.toLowerCase(), index);
    this.tierWeights.push(weight);
    this.tierMaskWeight.fill(-1);
    return index;
  }

  private podFor(podKey: string): PodState {
    let pod = this.pods.get(podKey);
    if (!pod) {
      pod = { key: podKey, engine: new Map(), column: -1 };
      this.pods.set(podKey, pod);
    }
    return pod;
  }

  private holderFor(key: number, pod: PodState): Holder {
    let list = this.keyHolders.get(key);
    if (list < 0) {
      list = this.freeLists.pop() ?? this.newList();
      this.holderLists[list] = [];
      this.listDerivation[list] = NO_DERIVATION;
      this.keyHolders.set(key, list);
      this.counters.bytes += KEY_BYTES;
    }
    const holders = this.holderLists[list]!;
    for (const holder of holders) if (holder.pod === pod) return holder;
    const holder: Holder = { key, pod, tiers: 0, specUntil: 0, alive: true };
    holders.push(holder);
    this.holderCount++;
    this.counters.bytes += HOLDER_BYTES;
    return holder;
  }

  private removeHolder(holder: Holder): void {
    if (!holder.alive) return;
    holder.alive = false;
    this.holderCount--;
    this.counters.bytes -= HOLDER_BYTES;
    const list = this.keyHolders.get(holder.key);
    const holders = this.holderLists[list]!;
    const at = holders.indexOf(holder);
    holders[at] = holders[holders.length - 1]!;
    holders.pop();
    if (holders.length === 0) {
      this.keyHolders.delete(holder.key);
      const derivation = this.listDerivation[list]!;
      if (derivation !== NO_DERIVATION && this.derived.get(derivation) === list)
        this.derived.delete(derivation);
      this.holderLists[list] = EMPTY_LIST;
      this.freeLists.push(list);
      this.counters.bytes -= KEY_BYTES;
    }
  }

  /** A new list id, its per-list arrays grown to hold it. */
  private newList(): number {
    const list = this.holderLists.length;
    if (list === this.listHi.length) {
      const grow = <T extends Uint32Array | Float64Array>(old: T, next: T): T => {
        next.set(old as never);
        return next;
      };
      this.listHi = grow(this.listHi, new Uint32Array(list * 2));
      this.listLo = grow(this.listLo, new Uint32Array(list * 2));
      this.listParent = grow(this.listParent, new Float64Array(list * 2));
      this.listDerivation = grow(this.listDerivation, new Float64Array(list * 2));
    }
    return list;
  }

  private link(block: EngineBlock): void {
    block.prev = this.newest;
    block.next = null;
    if (this.newest) this.newest.next = block;
    else this.oldest = block;
    this.newest = block;
  }

  private unlink(block: EngineBlock): void {
    if (block.prev) block.prev.next = block.next;
    else if (this.oldest === block) this.oldest = block.next;
    if (block.next) block.next.prev = block.prev;
    else if (this.newest === block) this.newest = block.prev;
    block.prev = null;
    block.next = null;
  }
}
