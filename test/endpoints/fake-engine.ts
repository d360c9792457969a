/** A tiny vLLM-like server for endpoint tests: settable Prometheus gauges, `/v1/models`, stop/restart on one port. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeEngineState {
  waiting: number;
  running: number;
  kvUsage: number;
  models: string[];
  /** Delay before answering /metrics, in ms. */
  metricsDelayMs: number;
}

/** A controllable fake model server; `metricsRequests` and `maxConcurrentScrapes` are observed by tests. */
export class FakeEngine {
  readonly state: FakeEngineState = { waiting: 0, running: 0, kvUsage: 0, models: ["m1"], metricsDelayMs: 0 };
  metricsRequests = 0;
  healthRequests = 0;
  maxConcurrentScrapes = 0;
  private concurrent = 0;
  private server: Server | undefined;
  port = 0;

  /** Listens on loopback (the previous port after a stop, else an ephemeral one). */
  async start(): Promise<this> {
    const server = createServer((req, res) => void this.handle(req.url ?? "", res));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", resolve);
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  /** Stops listening and drops keep-alive connections, like a crashed process. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private async handle(url: string, res: import("node:http").ServerResponse): Promise<void> {
    if (url === "/v1/models") {
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({ object: "list", data: this.state.models.map((id) => ({ id, object: "model" })) }),
      );
      return;
    }
    if (url === "/health") {
      this.healthRequests++;
      res.end();
      return;
    }
    if (url !== "/metrics") {
      res.statusCode = 404;
      res.end();
      return;
    }
    this.metricsRequests++;
    this.maxConcurrentScrapes = Math.max(this.maxConcurrentScrapes, ++this.concurrent);
    if (this.state.metricsDelayMs > 0) await new Promise((r) => setTimeout(r, this.state.metricsDelayMs));
    this.concurrent--;
    const { waiting, running, kvUsage } = this.state;
    res.end(
      `# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name="m1"} ${waiting}\n` +
        `vllm:num_requests_running{model_name="m1"} ${running}\nvllm:kv_cache_usage_perc{model_name="m1"} ${kvUsage}\n` +
        'vllm:cache_config_info{block_size="16",num_gpu_blocks="2048"} 1\n',
    );
  }
}

/** Polls `condition` every 5 ms until true; fails after `timeoutMs`. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
