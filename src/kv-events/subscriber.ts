/**
 * The router's KV-event subscriber (reference §4.1), over real ZeroMQ. Pod-discovery mode: one SUB
 * socket per endpoint host, connected to `tcp://<host>:<socketPort>`, opened and closed as endpoints
 * join and leave; replays come from `tcp://<host>:<replaySocketPort>` when that port is set. A
 * data-parallel rank r publishes on `socketPort + r` (and replays on `replaySocketPort + r`), as
 * vLLM offsets its event endpoints by the rank, so each rank has its own socket.
 * Centralized mode: one SUB socket bound at `zmqEndpoint` that the engines connect to (no replay:
 * the router does not know where their ROUTER sockets are). Only topics starting with
 * `topicFilter` are received. Each publisher's stream (one per topic and socket) goes through a
 * `KvEventSource` (gaps, restarts, joins, duplicates), and its batches are decoded and handed to
 * the sink with the endpoint they belong to.
 *
 * Nothing here blocks routing: receiving is asynchronous, a batch is applied in one short
 * synchronous step, the loop yields to other work every few batches, ZeroMQ bounds what waits
 * (`receiveHighWaterMark`, beyond which it drops and the drop shows up as a gap), and a replay runs
 * in the background under a timeout.
 */
import { Dealer, Subscriber } from "zeromq";
import type { IndexKvEvent } from "../kv-index/precise-index.ts";
import { decodeBatch, type EngineType, parseTopic } from "./decode.ts";
import { type PodLocation, PodResolver } from "./pod-resolver.ts";
import { KvEventSource, type SourceMessage, type SourceStats } from "./source.ts";

/** Subscriber settings (llm-d's `kvEventsConfig`, resolved). */
export interface KvEventSubscriberOptions {
  /** Pod discovery (a SUB per endpoint host) or centralized (bind `zmqEndpoint`). */
  discoverPods: boolean;
  zmqEndpoint: string;
  topicFilter: string;
  socketPort: number;
  /** 0: no replay socket. */
  replaySocketPort: number;
  replayTimeoutMs: number;
  engineType: EngineType;
}

/** Where decoded batches go. */
export interface KvEventSink {
  apply(events: readonly IndexKvEvent[], podKey: string, model: string): void;
  /** A publisher restarted: forget what it published for these endpoints. */
  reset(podKeys: readonly string[]): void;
}

/** Totals over all sources, plus what could not be used. */
export interface KvEventSubscriberStats extends SourceStats {
  /** Messages that were not three frames or did not decode. */
  malformed: number;
  /** Batches whose endpoint is not in the pool. */
  unknownPod: number;
  /** Events skipped inside decoded batches (unknown tags, not indexable). */
  skippedEvents: number;
  /** Open SUB sockets. */
  sockets: number;
}

/** Batches applied before the receive loop yields to other work. */
const BATCHES_PER_TURN = 64;
const RECEIVE_HWM = 10_000;
const END_OF_REPLAY = 0xffff_ffff_ffff_ffffn;

/** See the module comment. `start`, then `setPods` on every endpoint change; `close` when done. */
export class KvEventSubscriber {
  private readonly subscriptions = new Map<string, Subscription>();
  private central: Subscription | undefined;
  private resolver = new PodResolver([]);
  private readonly counters = { malformed: 0, unknownPod: 0, skippedEvents: 0 };
  private retiredStats: SourceStats = emptySourceStats();
  private closed = false;

  constructor(
    private readonly options: KvEventSubscriberOptions,
    private readonly sink: KvEventSink,
  ) {}

  /** Centralized mode binds its socket (rejects when it cannot); pod-discovery mode waits for pods. */
  async start(): Promise<void> {
    if (this.options.discoverPods) return;
    const sub = new Subscriber({ linger: 0, receiveHighWaterMark: RECEIVE_HWM });
    await sub.bind(this.options.zmqEndpoint);
    this.central = this.open(sub, null, null, []);
  }

  /** The address centralized mode bound (a wildcard port resolved), if any. */
  get boundEndpoint(): string | undefined {
    return this.central?.socket.lastEndpoint ?? undefined;
  }

  /** The endpoints now in the pool: resolves batches to them and, in pod-discovery mode, follows their hosts. */
  setPods(pods: readonly PodLocation[]): void {
    if (this.closed) return;
    this.resolver = new PodResolver(pods);
    if (!this.options.discoverPods) return;
    const wanted = new Map<string, { host: string; rank: number; served: PodLocation[] }>();
    for (const pod of pods) {
      const rank = pod.dpRank ?? 0;
      const id = `${pod.address}|${rank}`;
      const entry = wanted.get(id) ?? { host: pod.address, rank, served: [] };
      entry.served.push(pod);
      wanted.set(id, entry);
    }
    for (const [id, subscription] of this.subscriptions) {
      const entry = wanted.get(id);
      if (entry) subscription.served = entry.served;
      else {
        this.retire(subscription);
        this.subscriptions.delete(id);
      }
    }
    const { socketPort, replaySocketPort } = this.options;
    for (const [id, { host, rank, served }] of wanted) {
      if (this.subscriptions.has(id)) continue;
      const sub = new Subscriber({ linger: 0, receiveHighWaterMark: RECEIVE_HWM });
      sub.connect(tcpAddress(host, socketPort + rank));
      const replay = replaySocketPort > 0 ? tcpAddress(host, replaySocketPort + rank) : null;
      this.subscriptions.set(id, this.open(sub, host, replay, served));
    }
  }

  /** Counters over every source so far. */
  stats(): KvEventSubscriberStats {
    const total = { ...this.retiredStats };
    const live = [...this.subscriptions.values(), ...(this.central ? [this.central] : [])];
    for (const s of live) for (const source of s.sources.values()) addStats(total, source.stats);
    return { ...total, ...this.counters, sockets: live.length };
  }

  /** Closes every socket. */
  close(): void {
    this.closed = true;
    for (const s of this.subscriptions.values()) this.retire(s);
    this.subscriptions.clear();
    if (this.central) this.retire(this.central);
    this.central = undefined;
  }

  private open(
    socket: Subscriber,
    host: string | null,
    replayAddress: string | null,
    served: PodLocation[],
  ): Subscription {
    socket.subscribe(this.options.topicFilter);
    const subscription: Subscription = { socket, host, replayAddress, served, sources: new Map() };
    void this.receiveLoop(subscription);
    return subscription;
  }

  private retire(subscription: Subscription): void {
    subscription.socket.close();
    for (const source of subscription.sources.values()) addStats(this.retiredStats, source.stats);
    subscription.sources.clear();
  }

  private async receiveLoop(s: Subscription): Promise<void> {
    let applied = 0;
    try {
      for await (const frames of s.socket) {
        this.receive(s, frames);
        if (++applied % BATCHES_PER_TURN === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } catch {
      // The socket was closed.
    }
  }

  private receive(s: Subscription, frames: Buffer[]): void {
    if (frames.length !== 3 || frames[1]!.length !== 8) {
      this.counters.malformed++;
      return;
    }
    const topic = frames[0]!.toString("utf8");
    let source = s.sources.get(topic);
    if (!source) {
      source = this.newSource(s, topic);
      s.sources.set(topic, source);
    }
    source.receive(frames[1]!.readBigUInt64BE(0), frames[2]!);
  }

  private newSource(s: Subscription, topic: string): KvEventSource {
    const { pod, model } = parseTopic(topic);
    // Endpoint keys this publisher's batches went to, cleared on its restart.
    const delivered = new Set<string>();
    const replayAddress = s.replayAddress;
    const timeoutMs = this.options.replayTimeoutMs;
    return new KvEventSource({
      now: () => Date.now(),
      reset: () => {
        this.sink.reset([...delivered]);
        delivered.clear();
      },
      replay: replayAddress === null ? null : (from) => replayFrom(replayAddress, from, timeoutMs),
      apply: (payload) => {
        let batch: ReturnType<typeof decodeBatch>;
        try {
          batch = decodeBatch(payload, this.options.engineType);
        } catch {
          this.counters.malformed++;
          return;
        }
        this.counters.skippedEvents += batch.skipped;
        // A socket of one endpoint (pod discovery) names it; else the topic and rank decide.
        const podKey =
          s.served.length === 1 ? s.served[0]!.key : this.resolver.resolve(pod, s.host, batch.dpRank);
        if (podKey === undefined) {
          this.counters.unknownPod++;
          return;
        }
        delivered.add(podKey);
        this.sink.apply(batch.events, podKey, model);
      },
    });
  }
}

interface Subscription {
  socket: Subscriber;
  /** The endpoint host (pod-discovery mode), or null (centralized). */
  host: string | null;
  /** The endpoints publishing on this socket (pod-discovery mode). */
  served: PodLocation[];
  replayAddress: string | null;
  /** Publisher streams by topic. */
  sources: Map<string, KvEventSource>;
}

/**
 * Asks a publisher's ROUTER for every kept batch from `from`: sends `[empty, seq]` from a fresh
 * DEALER and collects `[empty, topic, seq, payload]` frames until the end marker. Rejects when the
 * whole exchange takes longer than `timeoutMs`.
 */
async function replayFrom(address: string, from: bigint, timeoutMs: number): Promise<SourceMessage[]> {
  const dealer = new Dealer({ linger: 0, sendTimeout: timeoutMs, receiveTimeout: timeoutMs });
  const timer = setTimeout(() => dealer.close(), timeoutMs);
  try {
    dealer.connect(address);
    const start = Buffer.allocUnsafe(8);
    start.writeBigUInt64BE(from);
    await dealer.send([Buffer.alloc(0), start]);
    const out: SourceMessage[] = [];
    for (;;) {
      const frames = await dealer.receive();
      if (frames.length !== 4 || frames[2]!.length !== 8) continue;
      const seq = frames[2]!.readBigUInt64BE(0);
      if (seq === END_OF_REPLAY && frames[3]!.length === 0) return out;
      out.push({ seq, payload: frames[3]! });
    }
  } finally {
    clearTimeout(timer);
    if (!dealer.closed) dealer.close();
  }
}

function tcpAddress(host: string, port: number): string {
  return `tcp://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

function emptySourceStats(): SourceStats {
  return { applied: 0, duplicates: 0, gaps: 0, restarts: 0, replays: 0, replayFailures: 0, lost: 0 };
}

function addStats(into: SourceStats, from: SourceStats): void {
  for (const k of Object.keys(into) as (keyof SourceStats)[]) into[k] += from[k];
}
