/**
 * `/metrics` in Prometheus text with vLLM's metric names (what llm-d's router scrapes), one registry
 * per server. Gauges and cumulative counters mirror `engine.stats()` at scrape time; latency
 * histograms are observed by the request handlers in engine-time seconds (so with `--speed 10` they
 * still report what the simulated GPU would show).
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { FinishReason } from "../api/openai.ts";
import type { EngineStats } from "../engine/types.ts";
import type { HostTiming } from "./driver.ts";

const TTFT_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640,
  2560,
];
const ITL_BUCKETS = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80,
];
const E2E_BUCKETS = [
  0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680,
];
const LATENESS_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1];
const TOKEN_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000];

/** Static facts shown in info gauges. */
export interface SimMetricsInfo {
  modelName: string;
  maxLoras: number;
}

/** Engine stats plus the counters mirrored from them (cumulative fields only). */
type CumulativeStat =
  | "prefixQueries"
  | "prefixHits"
  | "offloadHits"
  | "preemptions"
  | "evictions"
  | "promptTokens"
  | "generationTokens";

const MIRRORED: [string, string, CumulativeStat][] = [
  ["vllm:prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.", "prefixQueries"],
  ["vllm:prefix_cache_hits_total", "Prompt tokens found in the prefix cache.", "prefixHits"],
  [
    "vllm:external_prefix_cache_hits_total",
    "Prompt tokens loaded from an offload tier or a P/D prefill.",
    "offloadHits",
  ],
  ["vllm:num_preemptions_total", "Cumulative number of preemptions.", "preemptions"],
  ["vllm:prompt_tokens_total", "Prefill tokens processed.", "promptTokens"],
  ["vllm:generation_tokens_total", "Generation tokens processed.", "generationTokens"],
  ["llmd:kv_cache_evictions_total", "GPU KV blocks evicted from the prefix cache (LRU).", "evictions"],
];

type Observer = { observe(value: number): void };

/** Per-request observations, bound to the server's `model_name` label. */
export class SimMetrics {
  readonly registry = new Registry();
  private readonly ttft: Observer;
  private readonly itl: Observer;
  private readonly tpot: Observer;
  private readonly e2e: Observer;
  private readonly promptTokens: Observer;
  private readonly generationTokens: Observer;
  private readonly success: Counter;
  private readonly lateness: Observer;
  private loraKey = "";
  private loraSince = Date.now() / 1000;
  /** Stats read once per scrape and shared by every collector of that scrape. */
  private snapshot: EngineStats | null = null;
  private readonly stats = (): EngineStats => this.snapshot ?? this.readStats();

  constructor(
    private readonly info: SimMetricsInfo,
    private readonly readStats: () => EngineStats,
    readHost: () => HostTiming,
  ) {
    const labelNames = ["model_name"];
    const histogram = (name: string, help: string, buckets: number[]) =>
      new Histogram({ name, help, buckets, labelNames, registers: [this.registry] }).labels(info.modelName);
    this.ttft = histogram(
      "vllm:time_to_first_token_seconds",
      "Time to first token (engine time).",
      TTFT_BUCKETS,
    );
    this.itl = histogram(
      "vllm:inter_token_latency_seconds",
      "Inter-token latency (engine time).",
      ITL_BUCKETS,
    );
    this.tpot = histogram(
      "vllm:time_per_output_token_seconds",
      "Deprecated alias of inter-token latency.",
      ITL_BUCKETS,
    );
    this.e2e = histogram(
      "vllm:e2e_request_latency_seconds",
      "End-to-end request latency (engine time).",
      E2E_BUCKETS,
    );
    this.promptTokens = histogram("vllm:request_prompt_tokens", "Prompt tokens per request.", TOKEN_BUCKETS);
    this.generationTokens = histogram(
      "vllm:request_generation_tokens",
      "Output tokens per request.",
      TOKEN_BUCKETS,
    );
    this.success = new Counter({
      name: "vllm:request_success_total",
      help: "Finished requests by finish reason.",
      labelNames: ["model_name", "finish_reason"],
      registers: [this.registry],
    });
    this.lateness = new Histogram({
      name: "llmd:sim_step_lateness_seconds",
      help: "Wall seconds each engine step was delivered after its due time (host timer slop and load).",
      buckets: LATENESS_BUCKETS,
      registers: [this.registry],
    });
    new Counter({
      name: "llmd:sim_host_stalled_seconds_total",
      help: "Wall seconds excluded from engine time because the host fell too far behind.",
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(readHost().stalledMs / 1000);
      },
    });
    this.registerGauges();
    for (const [name, help, key] of MIRRORED) this.mirrorCounter(name, help, key);
  }

  /** Records the first token, `ttftS` engine seconds after arrival. */
  firstToken(ttftS: number): void {
    this.ttft.observe(ttftS);
  }

  /** Records `tokens` output tokens delivered together `gapS` engine seconds after the previous ones. */
  tokensAfter(gapS: number, tokens: number): void {
    const perToken = gapS / tokens;
    for (let i = 0; i < tokens; i++) {
      this.itl.observe(perToken);
      this.tpot.observe(perToken);
    }
  }

  /** Records how late (wall ms; negative = early, counted as 0) a step's outputs were delivered. */
  stepDelivered(lateMs: number): void {
    this.lateness.observe(Math.max(0, lateMs) / 1000);
  }

  /** Records a finished request. */
  finished(reason: FinishReason, e2eS: number, promptTokens: number, generated: number): void {
    this.e2e.observe(e2eS);
    this.promptTokens.observe(promptTokens);
    this.generationTokens.observe(generated);
    this.success.inc({ model_name: this.info.modelName, finish_reason: reason });
  }

  /** The exposition text. */
  async text(): Promise<string> {
    this.snapshot = this.readStats();
    try {
      return await this.registry.metrics();
    } finally {
      this.snapshot = null;
    }
  }

  private registerGauges(): void {
    const gauge = (name: string, help: string, read: (s: EngineStats) => number) => {
      const stats = this.stats;
      const model = this.info.modelName;
      new Gauge({
        name,
        help,
        labelNames: ["model_name"],
        registers: [this.registry],
        collect() {
          this.set({ model_name: model }, read(stats()));
        },
      });
    };
    gauge("vllm:num_requests_running", "Requests in the running batch.", (s) => s.running);
    gauge("vllm:num_requests_waiting", "Requests waiting to be scheduled.", (s) => s.waiting);
    gauge("vllm:kv_cache_usage_perc", "GPU KV-cache usage, 0..1.", (s) => s.kvUsage);
    gauge(
      "llmd:kv_cache_cached_blocks",
      "GPU KV blocks held only by the prefix cache (reusable).",
      (s) => s.cachedBlocks,
    );
    gauge("llmd:kv_cache_cpu_blocks", "KV blocks held in the CPU offload tier.", (s) => s.cpuBlocksHeld);
    this.infoGauges();
  }

  private infoGauges(): void {
    const { stats, info } = this;
    new Gauge({
      name: "vllm:cache_config_info",
      help: "KV cache configuration.",
      labelNames: ["block_size", "num_gpu_blocks", "num_cpu_blocks", "cache_dtype", "enable_prefix_caching"],
      registers: [this.registry],
      collect() {
        const s = stats();
        const labels = {
          block_size: s.blockSize,
          num_gpu_blocks: s.numGpuBlocks,
          num_cpu_blocks: s.numCpuBlocks,
        };
        this.set({ ...labels, cache_dtype: "auto", enable_prefix_caching: "True" }, 1);
      },
    });
    const lora = this;
    new Gauge({
      name: "vllm:lora_requests_info",
      help: "Running and waiting LoRA adapters; the value is the time (s) the set last changed.",
      labelNames: ["max_lora", "running_lora_adapters", "waiting_lora_adapters"],
      registers: [this.registry],
      collect() {
        const s = stats();
        const labels = {
          max_lora: String(info.maxLoras),
          running_lora_adapters: s.runningLoras.join(","),
          waiting_lora_adapters: s.waitingLoras.join(","),
        };
        this.reset();
        this.set(
          labels,
          lora.loraTimestamp(`${labels.running_lora_adapters}|${labels.waiting_lora_adapters}`),
        );
      },
    });
  }

  private loraTimestamp(key: string): number {
    if (key !== this.loraKey) {
      this.loraKey = key;
      this.loraSince = Date.now() / 1000;
    }
    return this.loraSince;
  }

  private mirrorCounter(name: string, help: string, key: CumulativeStat): void {
    const { stats, info } = this;
    let seen = 0;
    new Counter({
      name,
      help,
      labelNames: ["model_name"],
      registers: [this.registry],
      collect() {
        const value = stats()[key];
        if (value > seen) this.inc({ model_name: info.modelName }, value - seen);
        seen = Math.max(seen, value);
      },
    });
  }
}
