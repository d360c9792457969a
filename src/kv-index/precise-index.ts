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
 * Storage is typed arrays (`precise-pools.ts`, with `KeyTable`s for the lookups): a key's holders
 * are a linked list of holder ids, an engine block's claims on the holders it completes a list of
 * edges, and speculative entries are holder ids queued with their expiry, so ingesting, matching
 * and expiring allocate no object per block. Each held key also remembers how it was derived
 * (`blockDerivation`), which spares CBOR-FNV for every block the index already holds, and the
 * request keys of a conversation's append-only ids array (`ConversationIds`) are kept with the
 * array (`held-keys.ts`) with a hint of each one's slot, so a seen conversation's next turn derives
 * only the keys of its new blocks and finds the others without a table lookup.
 *
 * Pods are opaque strings (the router uses endpoint keys, one per data-parallel rank). The index
 * knows no sockets or clocks: the router's subscriber and the fleet simulator both call `apply`.
 */
import { type HeldKeys, heldKeysOf } from "./held-keys.ts";
import { KeyTable } from "./key-table.ts";
import { EdgePool, EngineBlockPool, ExpiryQueue, HolderPool, KeySlotPool, NONE } from "./precise-pools.ts";
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
  /** Entries of the speculative expiry queue: at most one per speculative holder, plus freed holders' not yet swept. */
  speculativeQueue: number;
}

/** Per-request match: leading blocks held contiguously, and those blocks weighted by their best tier. */
export interface PreciseMatch {
  blocks: Int32Array;
  weighted: Float64Array;
}

// Estimated bytes of the index's records: typed columns, plus hash-table pairs at ≤ 50% load.
const HOLDER_BYTES = 32;
/** A key's table slot, its derivation's table slot and its columns. */
const KEY_BYTES = 128;
/** An engine block's columns and its slot in the pod's table. */
const ENGINE_BLOCK_BYTES = 104;
const EDGE_BYTES = 12;
/** A tail token (only where engine and request block sizes differ). */
const TOKEN_BYTES = 4;
const MAX_TIERS = 16;
/** Tokens of speculative entries keyed per index call (0.4 ms of CBOR-FNV hot where no key is known, more cold). */
const SPECULATION_SLICE_TOKENS = 16_384;
/** What marking a block whose key its array keeps costs of that slice, in tokens: a lookup, not a hash. */
const HELD_MARK_TOKENS = 8;
/**
 * Words kept per held block: its key's two 32-bit halves (the chain after it), then its slot plus
 * one (0: not known), a hint that spares a match the key table's lookup, which misses the cache.
 */
const HELD_WORDS = 3;

/** A decision's speculative entries still to key, from block `next` on. */
interface Speculation {
  readonly tokens: ArrayLike<number>;
  readonly podId: number;
  readonly until: number;
  readonly blocks: number;
  readonly chain: Key64;
  parent: number;
  next: number;
  /** The prompt's array's kept keys, extended as the blocks are keyed. */
  readonly held: HeldKeys | undefined;
}

interface PodState {
  readonly key: string;
  readonly id: number;
  /** Engine key → engine block id. */
  readonly engine: KeyTable;
}

const TWO_POW_32 = 4294967296;

/**
 * Engine block hash → the index's 53-bit engine key: its low 53 bits, the low word mixed by a
 * bijection (odd multiply, xor-shift) salted with the high bits, so engines whose hashes count up
 * (a sequence, a block id) still spread over the `KeyTable`'s slots, which its low word addresses.
 */
function engineKey(hash: bigint): number {
  const bits = Number(BigInt.asUintN(53, hash));
  const hi = Math.floor(bits / TWO_POW_32);
  let lo = Math.imul((bits >>> 0) ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1);
  lo ^= lo >>> 16;
  return hi * TWO_POW_32 + (lo >>> 0);
}

/** Appends the next block's key (`key`, folded from `chain`), its chain and its slot (−1: not known) to `held`. */
function keep(held: HeldKeys, chain: Key64, key: number, slot: number): void {
  const i = held.blocks++;
  held.keys[i] = key;
  held.state[i * HELD_WORDS] = chain.hi;
  held.state[i * HELD_WORDS + 1] = chain.lo;
  held.state[i * HELD_WORDS + 2] = slot + 1;
}

/** The chain after held block `i`. */
function chainOf(held: HeldKeys, i: number): Key64 {
  return { hi: held.state[i * HELD_WORDS]! >>> 0, lo: held.state[i * HELD_WORDS + 1]! >>> 0 };
}

/** See the module comment. */
export class PreciseIndex {
  readonly hasher: RequestKeyHasher;
  /** Request key → its slot in `slots` (typed open addressing: no boxed 53-bit keys). */
  private readonly keySlots = new KeyTable();
  private readonly slots = new KeySlotPool();
  private readonly holders = new HolderPool();
  private readonly blocks = new EngineBlockPool();
  private readonly edges = new EdgePool();
  /** Derivation digest (`blockDerivation` of parent key and tokens) → slot of the key it derives. */
  private readonly derived = new KeyTable();
  /** Scratch: a parent's tail followed by one engine block's tokens. */
  private joined = new Uint32Array(256);
  private readonly chain: Key64 = { hi: 0, lo: 0 };
  private readonly tierMaskWeight = new Float64Array(1 << MAX_TIERS).fill(-1);
  private readonly pods = new Map<string, PodState>();
  private readonly podById: (PodState | undefined)[] = [];
  /** Per pod id: its position in the `match` under way, else −1. */
  private podColumn = new Int32Array(64).fill(-1);
  private readonly tierIndex = new Map<string, number>();
  private readonly tierWeights: number[] = [];
  /** Speculative insertions in expiry order (one TTL for all). */
  private readonly expiries = new ExpiryQueue();
  private readonly speculations: Speculation[] = [];
  private oldest = NONE;
  private newest = NONE;
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

  /**
   * Makes room up front for `records` records of each kind, or as many as the byte budget holds,
   * so a live index's storage doubles (a copy of its columns) only past that. The room is virtual
   * memory until records fill it.
   */
  reserve(records: number): void {
    const upTo = (bytes: number) => Math.min(records, Math.ceil(this.options.maxBytes / bytes));
    this.holders.reserve(upTo(HOLDER_BYTES));
    this.expiries.reserve(upTo(HOLDER_BYTES));
    this.slots.reserve(upTo(KEY_BYTES));
    this.blocks.reserve(upTo(ENGINE_BLOCK_BYTES));
    this.edges.reserve(upTo(EDGE_BYTES));
  }

  /** Counts and sizes. */
  stats(): PreciseIndexStats {
    return {
      keys: this.keySlots.size,
      holders: this.holderCount,
      engineBlocks: this.engineBlockCount,
      speculativeQueue: this.expiries.length,
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
    const chain = this.rootChain(model);
    let parent = foldKey(chain.hi, chain.lo);
    for (let i = 0; i < out.length; i++) {
      this.nextKey(chain, parent, tokens, i * size);
      out[i] = parent = foldKey(chain.hi, chain.lo);
    }
    return out;
  }

  private rootChain(model: string): Key64 {
    const root = this.hasher.root(model);
    return { hi: root.hi, lo: root.lo };
  }

  /**
   * Advances `chain` (whose folded key is `parent`) over the request block at `from`: the key the
   * index holds under the block's derivation digest when its parent is the same, else CBOR-FNV.
   * Returns the digest.
   */
  private nextKey(chain: Key64, parent: number, tokens: ArrayLike<number>, from: number): number {
    const derivation = blockDerivation(chain, tokens, from, this.hasher.blockSizeTokens);
    const slot = this.derived.get(derivation);
    if (slot >= 0 && this.slots.parent[slot] === parent) {
      chain.hi = this.slots.hi[slot]!;
      chain.lo = this.slots.lo[slot]!;
    } else this.hasher.next(chain, tokens, from, chain);
    return derivation;
  }

  /**
   * Advances `chain` (folded: `parent`) over the block at `from`, as `nextKey`, and returns the
   * slot of the key it reaches (created if absent), remembering how it was derived.
   */
  private heldKeySlot(chain: Key64, parent: number, tokens: ArrayLike<number>, from: number): number {
    const derivation = this.nextKey(chain, parent, tokens, from);
    const slot = this.slotFor(foldKey(chain.hi, chain.lo));
    this.noteDerivation(slot, chain, parent, derivation);
    return slot;
  }

  /** Records how the key of `slot` (`chain`) was derived, so `nextKey` finds it again. */
  private noteDerivation(slot: number, chain: Key64, parent: number, derivation: number): void {
    if (this.slots.derivation[slot] !== NONE) return;
    this.slots.hi[slot] = chain.hi;
    this.slots.lo[slot] = chain.lo;
    this.slots.parent[slot] = parent;
    this.slots.derivation[slot] = derivation;
    this.derived.set(derivation, slot);
  }

  /** Applies one batch of `podKey`'s events, in order; `model` is the engine's served model. */
  apply(events: readonly IndexKvEvent[], podKey: string, model: string, nowMs: number): void {
    this.sweep(nowMs);
    this.speculate(nowMs);
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
    for (let i = 0; i < this.expiries.length; i++) {
      const holder = this.expiries.holder(i);
      if (this.holders.pod[holder] === pod.id) this.removeHolder(holder);
    }
    for (let i = this.speculations.length - 1; i >= 0; i--)
      if (this.speculations[i]!.podId === pod.id) this.speculations.splice(i, 1);
    this.pods.delete(podKey);
    this.podById[pod.id] = undefined;
  }

  /**
   * Marks the full blocks of `tokens` as held by `podKey` until `nowMs + speculativeTtlMs` (a
   * routing decision sent the prompt there); an event confirming a key makes it a regular entry.
   * Keys are computed from the start of the prompt, `SPECULATION_SLICE_TOKENS` tokens now and as
   * many at every later call into the index (an event batch, a decision), so a never-seen 200K-token
   * prompt does not cost one decision its whole CBOR-FNV; the leading blocks, which concurrent
   * requests share, are marked first. `keys`, when given, are the request keys of all of `tokens`'
   * full blocks (a match that reached the end): they are marked at once, as are the keys kept with
   * a conversation's array (`held-keys.ts`), whose remaining blocks are keyed in slices from there.
   */
  insertSpeculative(
    tokens: ArrayLike<number>,
    model: string,
    podKey: string,
    nowMs: number,
    keys?: Float64Array,
  ): void {
    this.sweep(nowMs);
    const podId = this.podFor(podKey).id;
    const until = nowMs + this.options.speculativeTtlMs;
    const blocks = Math.floor(tokens.length / this.hasher.blockSizeTokens);
    const held = this.heldKeys(tokens, model);
    const all = keys?.length === blocks;
    const known = all ? keys : held?.keys;
    const marked = all ? blocks : Math.min(held?.blocks ?? 0, blocks);
    for (let i = 0; i < marked; i++) {
      const slot = held && i < held.blocks ? this.heldSlot(held, i, true) : this.slotFor(known![i]!);
      this.markSpeculative(this.holderIn(slot, podId), until);
    }
    if (marked === blocks) return;
    const chain = marked === 0 ? this.rootChain(model) : chainOf(held!, marked - 1);
    this.speculations.push({
      tokens,
      podId,
      until,
      blocks,
      chain,
      parent: foldKey(chain.hi, chain.lo),
      next: marked,
      held,
    });
    this.speculate(nowMs);
  }

  /**
   * Keys one slice of the pending speculative entries, as every index call does first; true while
   * some are still pending. A live host calls it in idle turns of its event loop.
   */
  keySpeculative(nowMs: number): boolean {
    this.speculate(nowMs);
    return this.speculationPending;
  }

  /** True while some decision's speculative entries are not yet keyed. */
  get speculationPending(): boolean {
    return this.speculations.length > 0;
  }

  /** Speculative entries not yet keyed (blocks), over all decisions. */
  get pendingSpeculativeBlocks(): number {
    let pending = 0;
    for (const s of this.speculations) pending += s.blocks - s.next;
    return pending;
  }

  /**
   * `holder` is speculative until `until`, unless an event already shows it held. A holder already
   * speculative keeps its one entry in the expiry queue, which the sweep moves on to the new time
   * (a conversation's every turn re-marks all its blocks).
   */
  private markSpeculative(holder: number, until: number): void {
    const holders = this.holders;
    if (holders.tiers[holder] !== 0) return;
    const queued = holders.specUntil[holder]! > 0;
    holders.specUntil[holder] = until;
    if (queued) return;
    this.expiries.push(holder, holders.generation[holder]!, until);
  }

  /** Keys up to one slice of the pending speculative entries; those past their TTL are dropped. */
  private speculate(nowMs: number): void {
    const size = this.hasher.blockSizeTokens;
    let budget = SPECULATION_SLICE_TOKENS;
    while (budget > 0 && this.speculations.length > 0) {
      const s = this.speculations[0]!;
      while (s.next < s.blocks && budget > 0 && s.until > nowMs) {
        if (s.held && s.held.blocks > s.next) {
          budget -= this.markHeld(s, s.held, budget);
          continue;
        }
        const slot = this.heldKeySlot(s.chain, s.parent, s.tokens, s.next * size);
        s.parent = this.slots.key[slot]!;
        if (s.held?.blocks === s.next) keep(s.held, s.chain, s.parent, slot);
        this.markSpeculative(this.holderIn(slot, s.podId), s.until);
        s.next++;
        budget -= size;
      }
      if (s.next === s.blocks || s.until <= nowMs) this.speculations.shift();
    }
  }

  /**
   * Marks the blocks of `s` from `s.next` whose keys `held` (its array's) already keeps, another
   * call having keyed them since, within `budget` tokens; moves its chain on past them and returns
   * the budget spent.
   */
  private markHeld(s: Speculation, held: HeldKeys, budget: number): number {
    const from = s.next;
    const end = Math.min(held.blocks, s.blocks, from + Math.ceil(budget / HELD_MARK_TOKENS));
    for (; s.next < end; s.next++)
      this.markSpeculative(this.holderIn(this.heldSlot(held, s.next, true), s.podId), s.until);
    const chain = chainOf(held, end - 1);
    s.chain.hi = chain.hi;
    s.chain.lo = chain.lo;
    s.parent = held.keys[end - 1]!;
    return (end - from) * HELD_MARK_TOKENS;
  }

  /**
   * For each of `podKeys`, the leading blocks of `keys` it holds contiguously (a live tier or an
   * unexpired speculative entry) and their sum of best-tier weights.
   */
  match(keys: Float64Array, podKeys: readonly string[], nowMs: number): PreciseMatch {
    return this.withColumns(podKeys, (blocks, weighted) => {
      let i = 0;
      while (i < keys.length && this.advance(this.keySlots.get(keys[i]!), i, nowMs, blocks, weighted)) i++;
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
    this.speculate(nowMs);
    const size = this.hasher.blockSizeTokens;
    const total = Math.floor(tokens.length / size);
    const held = this.heldKeys(tokens, model);
    const keys = held ? held.keys : new Float64Array(total);
    let count = 0;
    const matched = this.withColumns(podKeys, (blocks, weighted) => {
      const kept = held ? Math.min(held.blocks, total) : 0;
      while (count < kept) {
        const slot = this.heldSlot(held!, count, false);
        if (!this.advance(slot, count++, nowMs, blocks, weighted)) return;
      }
      const chain = count === 0 ? this.rootChain(model) : chainOf(held!, count - 1);
      let parent = foldKey(chain.hi, chain.lo);
      while (count < total) {
        this.nextKey(chain, parent, tokens, count * size);
        parent = foldKey(chain.hi, chain.lo);
        const slot = this.keySlots.get(parent);
        // Held: `keys` is the kept keys, which `keep` extends by this block.
        if (held) keep(held, chain, parent, slot);
        else keys[count] = parent;
        if (!this.advance(slot, count++, nowMs, blocks, weighted)) break;
      }
    });
    return { ...matched, keys: keys.subarray(0, count) };
  }

  /** The kept request keys of `tokens`' array for `model`, when it is a conversation's append-only view. */
  private heldKeys(tokens: ArrayLike<number>, model: string): HeldKeys | undefined {
    if (!(tokens instanceof Uint32Array)) return undefined;
    const root = this.hasher.root(model);
    return heldKeysOf(tokens, `cbor-fnv:${root.hi}:${root.lo}`, this.hasher.blockSizeTokens, HELD_WORDS);
  }

  /** Marks the known pods of `podKeys` with their positions (`podColumn`) while `walk` runs. */
  private withColumns(
    podKeys: readonly string[],
    walk: (blocks: Int32Array, weighted: Float64Array) => void,
  ): PreciseMatch {
    const blocks = new Int32Array(podKeys.length);
    const weighted = new Float64Array(podKeys.length);
    const marked: number[] = [];
    for (let c = 0; c < podKeys.length; c++) {
      const pod = this.pods.get(podKeys[c]!);
      if (pod && this.podColumn[pod.id]! < 0) {
        this.podColumn[pod.id] = c;
        marked.push(pod.id);
      }
    }
    if (marked.length > 0) walk(blocks, weighted);
    for (const id of marked) this.podColumn[id] = -1;
    return { blocks, weighted };
  }

  /**
   * The slot of held block `i`'s key, from the block's hint while that slot still holds the key (a
   * freed slot holds none), else from the key table (made when `create`), which renews the hint;
   * −1 when no pod holds the key and not `create`.
   */
  private heldSlot(held: HeldKeys, i: number, create: boolean): number {
    const key = held.keys[i]!;
    const at = i * HELD_WORDS + 2;
    const hint = held.state[at]! - 1;
    if (hint >= 0 && this.slots.key[hint] === key) return hint;
    const slot = create ? this.slotFor(key) : this.keySlots.get(key);
    held.state[at] = slot + 1;
    return slot;
  }

  /**
   * Extends by block `i` (its key's slot, −1 when no pod holds it) the runs of the marked pods that
   * reached it; false when none did.
   */
  private advance(
    slot: number,
    i: number,
    nowMs: number,
    blocks: Int32Array,
    weighted: Float64Array,
  ): boolean {
    if (slot < 0) return false;
    const holders = this.holders;
    let advanced = false;
    for (let h = this.slots.firstHolder[slot]!; h !== NONE; h = holders.next[h]!) {
      const c = this.podColumn[holders.pod[h]!]!;
      if (c < 0 || blocks[c] !== i) continue;
      const weight = this.weightOf(h, nowMs);
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
    const blocks = this.blocks;
    const chain = this.chain;
    /** The engine block before the next one, whose tail it continues (NONE: a chain's first). */
    let previous = NONE;
    if (event.parentBlockHash === null) {
      const root = this.hasher.root(event.lora ?? model);
      chain.hi = root.hi;
      chain.lo = root.lo;
    } else {
      const parent = pod.engine.get(engineKey(event.parentBlockHash));
      if (parent < 0) {
        this.counters.orphanBlocks += blockHashes.length;
        return;
      }
      chain.hi = blocks.chainHi[parent]!;
      chain.lo = blocks.chainLo[parent]!;
      previous = parent;
    }
    for (let i = 0; i < blockHashes.length; i++) {
      if (tokenIds.length < (i + 1) * blockSize) {
        this.counters.orphanBlocks += blockHashes.length - i;
        return;
      }
      const key = engineKey(blockHashes[i]!);
      let block = pod.engine.get(key);
      if (block >= 0) {
        this.gainTier(block, tier);
        chain.hi = blocks.chainHi[block]!;
        chain.lo = blocks.chainLo[block]!;
      } else block = this.newEngineBlock(pod, key, tier, chain, previous, tokenIds, i * blockSize, blockSize);
      this.counters.storedBlocks++;
      previous = block;
    }
  }

  /**
   * Extends `chain` (the parent's, then this block's) over one engine block's tokens, after the
   * tail of engine block `parent` (NONE: none), and remembers the block.
   */
  private newEngineBlock(
    pod: PodState,
    key: number,
    tier: number,
    chain: Key64,
    parent: number,
    tokenIds: ArrayLike<number>,
    from: number,
    blockSize: number,
  ): number {
    const size = this.hasher.blockSizeTokens;
    const blocks = this.blocks;
    const parentTail = parent === NONE ? 0 : blocks.tailLength[parent]!;
    let tokens: ArrayLike<number> = tokenIds;
    let start = from;
    let length = blockSize;
    if (parentTail > 0) {
      length = parentTail + blockSize;
      if (this.joined.length < length) this.joined = new Uint32Array(length * 2);
      const joined = this.joined;
      const run = blocks.tail.tokens;
      const at = blocks.tailAt[parent]!;
      for (let t = 0; t < parentTail; t++) joined[t] = run[at + t]!;
      for (let t = 0; t < blockSize; t++) joined[parentTail + t] = tokenIds[from + t]!;
      tokens = joined;
      start = 0;
    }
    const block = blocks.alloc(pod.id, key, tier);
    const full = Math.floor(length / size);
    for (let j = 0; j < full; j++) {
      const slot = this.heldKeySlot(chain, foldKey(chain.hi, chain.lo), tokens, start + j * size);
      const holder = this.holderIn(slot, pod.id);
      this.confirm(holder, tier);
      blocks.firstEdge[block] = this.edges.alloc(
        holder,
        this.holders.generation[holder]!,
        blocks.firstEdge[block]!,
      );
    }
    blocks.chainHi[block] = chain.hi;
    blocks.chainLo[block] = chain.lo;
    const rest = length - full * size;
    let bytes = ENGINE_BLOCK_BYTES + full * EDGE_BYTES;
    if (rest > 0) {
      blocks.setTail(block, tokens, start + full * size, rest);
      bytes += rest * TOKEN_BYTES;
    }
    blocks.bytes[block] = bytes;
    pod.engine.set(key, block);
    this.engineBlockCount++;
    this.counters.bytes += bytes;
    this.link(block);
    return block;
  }

  /** The holder edge `e` points at, or NONE when that holder was freed since. */
  private liveHolder(e: number): number {
    const holder = this.edges.holder[e]!;
    return this.holders.generation[holder] === this.edges.generation[e] ? holder : NONE;
  }

  /** An event shows the pod holding `holder` on `tier`: no longer speculative. */
  private confirm(holder: number, tier: number): void {
    this.holders.tiers[holder]! |= tier;
    this.holders.specUntil[holder] = 0;
  }

  /** A block already known got another tier (an offload copy): it and its holders gain the bit. */
  private gainTier(block: number, tier: number): void {
    this.blocks.tiers[block]! |= tier;
    for (let e = this.blocks.firstEdge[block]!; e !== NONE; e = this.edges.next[e]!) {
      const holder = this.liveHolder(e);
      if (holder !== NONE) this.confirm(holder, tier);
    }
    this.unlink(block);
    this.link(block);
  }

  private removed(hashes: readonly bigint[], medium: string | null, podKey: string): void {
    const pod = this.pods.get(podKey);
    if (!pod) return;
    const tier = this.tierBit(medium);
    for (const hash of hashes) {
      const block = pod.engine.get(engineKey(hash));
      if (block < 0) continue;
      this.counters.removedBlocks++;
      this.blocks.tiers[block]! &= ~tier;
      this.clearOwned(block, tier);
      if (this.blocks.tiers[block] === 0) this.dropEngineBlock(block);
    }
  }

  /** The live holders an engine block completes lose `tier`. */
  private clearOwned(block: number, tier: number): void {
    for (let e = this.blocks.firstEdge[block]!; e !== NONE; e = this.edges.next[e]!) {
      const holder = this.liveHolder(e);
      if (holder !== NONE) this.clearTier(holder, tier);
    }
  }

  private clearTier(holder: number, tier: number): void {
    const holders = this.holders;
    if (holders.pod[holder] === NONE) return;
    holders.tiers[holder]! &= ~tier;
    if (holders.tiers[holder] === 0 && holders.specUntil[holder] === 0) this.removeHolder(holder);
  }

  /** Forgets an engine block (its holders lose its tiers). */
  private dropEngineBlock(block: number): void {
    const blocks = this.blocks;
    const pod = this.podById[blocks.pod[block]!]!;
    pod.engine.delete(blocks.engineKey[block]!);
    this.unlink(block);
    this.engineBlockCount--;
    this.counters.bytes -= blocks.bytes[block]!;
    this.clearOwned(block, blocks.tiers[block]!);
    for (let e = blocks.firstEdge[block]!; e !== NONE; ) {
      const next = this.edges.next[e]!;
      this.edges.release(e);
      e = next;
    }
    blocks.release(block);
  }

  private enforceBudget(): void {
    while (this.counters.bytes > this.options.maxBytes && this.oldest !== NONE) {
      this.counters.evictedBlocks++;
      this.dropEngineBlock(this.oldest);
    }
  }

  /** Removes the speculative holders that expired and were not confirmed, renewed or freed. */
  private sweep(nowMs: number): void {
    const queue = this.expiries;
    const holders = this.holders;
    while (queue.length > 0 && queue.until(0) <= nowMs) {
      const holder = queue.holder(0);
      const generation = queue.generation(0);
      queue.shift();
      const latest = holders.specUntil[holder]!;
      // A freed holder, or one an event confirmed (0), is dropped from the queue.
      if (holders.generation[holder] !== generation || latest === 0) continue;
      if (latest > nowMs)
        queue.push(holder, generation, latest); // re-marked since: queued again at its new time
      else {
        holders.specUntil[holder] = 0;
        if (holders.tiers[holder] === 0) this.removeHolder(holder);
      }
    }
  }

  private weightOf(holder: number, nowMs: number): number {
    const mask = this.holders.tiers[holder]!;
    if (mask === 0) return this.holders.specUntil[holder]! > nowMs ? this.tierWeights[0]! : -1;
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
      let id = this.podById.indexOf(undefined);
      if (id < 0) id = this.podById.length;
      pod = { key: podKey, id, engine: new KeyTable() };
      this.pods.set(podKey, pod);
      this.podById[id] = pod;
      if (id >= this.podColumn.length) {
        const columns = new Int32Array(this.podColumn.length * 2).fill(-1);
        columns.set(this.podColumn);
        this.podColumn = columns;
      }
    }
    return pod;
  }

  /** The slot of request key `key`, created if absent. */
  private slotFor(key: number): number {
    let slot = this.keySlots.get(key);
    if (slot < 0) {
      slot = this.slots.alloc(key);
      this.keySlots.set(key, slot);
      this.counters.bytes += KEY_BYTES;
    }
    return slot;
  }

  /** The holder of (key `slot`, pod `podId`), created if absent. */
  private holderIn(slot: number, podId: number): number {
    const holders = this.holders;
    const first = this.slots.firstHolder[slot]!;
    for (let h = first; h !== NONE; h = holders.next[h]!) if (holders.pod[h] === podId) return h;
    const holder = holders.alloc(slot, podId);
    holders.next[holder] = first;
    this.slots.firstHolder[slot] = holder;
    this.holderCount++;
    this.counters.bytes += HOLDER_BYTES;
    return holder;
  }

  private removeHolder(holder: number): void {
    const holders = this.holders;
    if (holders.pod[holder] === NONE) return;
    const slot = holders.slot[holder]!;
    const slots = this.slots;
    let h = slots.firstHolder[slot]!;
    if (h === holder) slots.firstHolder[slot] = holders.next[holder]!;
    else {
      while (holders.next[h] !== holder) h = holders.next[h]!;
      holders.next[h] = holders.next[holder]!;
    }
    holders.release(holder);
    this.holderCount--;
    this.counters.bytes -= HOLDER_BYTES;
    if (slots.firstHolder[slot] === NONE) {
      this.keySlots.delete(slots.key[slot]!);
      const derivation = slots.derivation[slot]!;
      if (derivation !== NONE && this.derived.get(derivation) === slot) this.derived.delete(derivation);
      slots.release(slot);
      this.counters.bytes -= KEY_BYTES;
    }
  }

  private link(block: number): void {
    const blocks = this.blocks;
    blocks.prev[block] = this.newest;
    blocks.next[block] = NONE;
    if (this.newest !== NONE) blocks.next[this.newest] = block;
    else this.oldest = block;
    this.newest = block;
  }

  private unlink(block: number): void {
    const blocks = this.blocks;
    const prev = blocks.prev[block]!;
    const next = blocks.next[block]!;
    if (prev !== NONE) blocks.next[prev] = next;
    else if (this.oldest === block) this.oldest = next;
    if (next !== NONE) blocks.prev[next] = prev;
    else if (this.newest === block) this.newest = prev;
    blocks.prev[block] = NONE;
    blocks.next[block] = NONE;
  }
}
