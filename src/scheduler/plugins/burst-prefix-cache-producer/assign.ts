/**
 * The joint placement of one burst window (llm-d's burst-prefix-cache-producer rule). Requests with
 * an identical prompt (the same chained block hashes) form a group; a group of two or more is a
 * placement unit, and so is a lone request sharing `minColocateBlocks` leading blocks with another
 * request of the window (when that is > 0). Groups are placed before lone requests, longer prompts
 * first; a unit fills one replica (up to `maxPerReplica` of its members, -1 = all) before spilling
 * to the next least-loaded one. Its first replica may instead be one already holding a unit of
 * this window that shares ≥ `minColocateBlocks` leading blocks, while that replica is under its
 * fair share of the window. Requests in no unit get no assignment.
 */

/** One request of the window; `assigned` is filled by {@link assignBurst}. */
export interface BurstEntry {
  /** Chained block hashes of the prompt (equal last hash and length ⇒ equal prefix). */
  readonly hashes: Float64Array;
  assigned?: string;
}

/** A replica the window may use: its endpoint key and running requests (the tie-break). */
export interface BurstReplica {
  readonly key: string;
  readonly running: number;
}

/** `maxPerReplica` meaning "no cap". */
export const UNLIMITED = -1;

/** Identity of the first `n` blocks: the chain's n-th hash and n. */
const prefixId = (hashes: Float64Array, n: number) => `${n}:${hashes[n - 1]}`;

/** Assigns each entry of a unit a replica key (see the module comment). */
export function assignBurst(
  entries: readonly BurstEntry[],
  replicas: readonly BurstReplica[],
  maxPerReplica: number,
  minColocateBlocks: number,
): void {
  if (replicas.length === 0) return;
  const groups = new Map<string, BurstEntry[]>();
  for (const e of entries) {
    if (e.hashes.length === 0) continue;
    const id = prefixId(e.hashes, e.hashes.length);
    const group = groups.get(id);
    if (group) group.push(e);
    else groups.set(id, [e]);
  }
  const shared = sharingPrefix([...groups.values()], minColocateBlocks);
  const byLength = (a: BurstEntry[], b: BurstEntry[]) => b[0]!.hashes.length - a[0]!.hashes.length;
  const many = [...groups.values()].filter((g) => g.length >= 2).sort(byLength);
  const lone = [...groups.values()].filter((g) => g.length === 1 && shared.has(g)).sort(byLength);
  const units = [...many, ...lone];
  const members = units.reduce((n, g) => n + g.length, 0);
  const placement = new WindowPlacement(replicas, maxPerReplica, minColocateBlocks, members);
  for (const unit of units) placement.place(unit);
}

/** The groups whose first `minColocateBlocks` blocks some other request of the window shares. */
function sharingPrefix(groups: readonly BurstEntry[][], minColocateBlocks: number): Set<BurstEntry[]> {
  const shared = new Set<BurstEntry[]>();
  if (minColocateBlocks <= 0) return shared;
  const requests = new Map<string, number>();
  const idOf = new Map<BurstEntry[], string>();
  for (const g of groups) {
    if (g[0]!.hashes.length < minColocateBlocks) continue;
    const id = prefixId(g[0]!.hashes, minColocateBlocks);
    idOf.set(g, id);
    requests.set(id, (requests.get(id) ?? 0) + g.length);
  }
  for (const [g, id] of idOf) if (requests.get(id)! >= 2) shared.add(g);
  return shared;
}

/** Placement state of one window: members per replica and which replicas hold which blocks. */
class WindowPlacement {
  private readonly load = new Map<string, number>();
  private readonly holders = new Map<number, Set<string>>();
  /** Fair share: the window's unit members spread evenly (ceil). */
  private readonly fairShare: number;

  constructor(
    private readonly replicas: readonly BurstReplica[],
    private readonly maxPerReplica: number,
    private readonly minColocateBlocks: number,
    members: number,
  ) {
    this.fairShare = Math.ceil(members / replicas.length);
  }

  place(unit: BurstEntry[]): void {
    const hashes = unit[0]!.hashes;
    const onReplica = new Map<string, number>();
    let next = this.minColocateBlocks > 0 ? this.colocated(hashes, onReplica) : undefined;
    for (let i = 0; i < unit.length; ) {
      const replica = next ?? this.leastLoaded(onReplica);
      next = undefined;
      const room = this.maxPerReplica === UNLIMITED ? unit.length : this.maxPerReplica;
      // Past k × replicas every replica is full: one more each, rebalancing.
      const run = Math.min(unit.length - i, Math.max(1, room - (onReplica.get(replica) ?? 0)));
      for (let j = i; j < i + run; j++) unit[j]!.assigned = replica;
      onReplica.set(replica, (onReplica.get(replica) ?? 0) + run);
      this.load.set(replica, (this.load.get(replica) ?? 0) + run);
      this.hold(hashes, replica);
      i += run;
    }
  }

  /** The replica holding the longest shared prefix (≥ minColocateBlocks), under its fair share. */
  private colocated(hashes: Float64Array, onReplica: ReadonlyMap<string, number>): string | undefined {
    const matched = this.leadingBlocksHeld(hashes);
    let best: BurstReplica | undefined;
    for (const r of this.replicas) {
      const m = matched.get(r.key) ?? 0;
      if (m < this.minColocateBlocks || !this.hasRoom(r.key, onReplica)) continue;
      if ((this.load.get(r.key) ?? 0) >= this.fairShare) continue;
      const bestMatch = best ? (matched.get(best.key) ?? 0) : -1;
      if (m > bestMatch || (m === bestMatch && best && this.lighter(r, best))) best = r;
    }
    return best?.key;
  }

  private leastLoaded(onReplica: ReadonlyMap<string, number>): string {
    let best: BurstReplica | undefined;
    for (const r of this.replicas)
      if (this.hasRoom(r.key, onReplica) && (!best || this.lighter(r, best))) best = r;
    if (!best) for (const r of this.replicas) if (!best || this.lighter(r, best)) best = r;
    return best!.key;
  }

  private hasRoom(key: string, onReplica: ReadonlyMap<string, number>): boolean {
    return this.maxPerReplica === UNLIMITED || (onReplica.get(key) ?? 0) < this.maxPerReplica;
  }

  /** Fewer members of this window, then fewer running requests, then the lower key. */
  private lighter(a: BurstReplica, b: BurstReplica): boolean {
    const la = this.load.get(a.key) ?? 0;
    const lb = this.load.get(b.key) ?? 0;
    if (la !== lb) return la < lb;
    if (a.running !== b.running) return a.running < b.running;
    return a.key < b.key;
  }

  /** Leading blocks of `hashes` each replica holds, up to the first block nobody holds. */
  private leadingBlocksHeld(hashes: Float64Array): Map<string, number> {
    const held = new Map<string, number>();
    for (const hash of hashes) {
      const replicas = this.holders.get(hash);
      if (!replicas) break;
      for (const key of replicas) held.set(key, (held.get(key) ?? 0) + 1);
    }
    return held;
  }

  private hold(hashes: Float64Array, replica: string): void {
    for (const hash of hashes) {
      let replicas = this.holders.get(hash);
      if (!replicas) {
        replicas = new Set();
        this.holders.set(hash, replicas);
      }
      replicas.add(replica);
    }
  }
}
