/**
 * `llmd sim --dcgm-port`: an NVIDIA DCGM exporter beside the simulated server, as a sidecar would
 * run one, so the router's `dcgm-data-source` can be exercised over real HTTP. One sample per GPU
 * of the profile's tensor-parallel group, with dcgm-exporter's metric and label names:
 * `DCGM_FI_DEV_GPU_UTIL` (%) is the engine's busy share of the last second, framebuffer used/free
 * (MiB) are the weights plus the preallocated KV pool against the GPU's memory, and power (W) runs
 * from idle to the board limit with utilisation.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ResolvedEngineOptions } from "../engine/options.ts";
import type { EngineDriver } from "./driver.ts";

const MIB = 1024 * 1024;
/** CUDA context, activations and allocator slack per GPU beyond weights and KV, bytes. */
const RUNTIME_OVERHEAD_BYTES = 1.5 * 1024 * MIB;
/** H200 SXM idle draw and board power limit, watts. */
const IDLE_WATTS = 75;
const MAX_WATTS = 700;

/** A running exporter. */
export interface DcgmExporter {
  readonly port: number;
  close(): Promise<void>;
}

interface GpuSample {
  utilPercent: number;
  fbUsedMiB: number;
  fbFreeMiB: number;
  powerWatts: number;
}

const FAMILIES: [keyof GpuSample, string, string][] = [
  ["utilPercent", "DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %)."],
  ["fbUsedMiB", "DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB)."],
  ["fbFreeMiB", "DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB)."],
  ["powerWatts", "DCGM_FI_DEV_POWER_USAGE", "Power draw (in W)."],
];

/**
 * The exporter's page as a function of the engine's state: every family, one gauge sample per GPU
 * of the tensor-parallel group. The labels and the framebuffer (preallocated, so constant) are
 * worked out once; a scrape reads only the busy share.
 */
function dcgmPage(driver: EngineDriver, options: ResolvedEngineOptions, hostname: string): () => string {
  const m = options.profile.model;
  const totalMiB = Math.floor((options.gpuMemoryGb * 1e9) / MIB);
  const usedBytes = m.layers * m.layer_weight_bytes + options.numGpuBlocks * options.blockBytes;
  const fbUsedMiB = Math.min(totalMiB, Math.round((usedBytes + RUNTIME_OVERHEAD_BYTES) / MIB));
  const uuidHost = hostname.replace(/[^0-9a-z]/gi, "");
  const gpus = Array.from(
    { length: m.tp },
    (_, gpu) =>
      `gpu="${gpu}",UUID="GPU-${uuidHost}-${gpu}",device="nvidia${gpu}",modelName="${options.profile.gpu.device}",Hostname="${hostname}"`,
  );
  return () => {
    const util = driver.busy.fraction(driver.now());
    const values: GpuSample = {
      utilPercent: Math.round(util * 100),
      fbUsedMiB,
      fbFreeMiB: totalMiB - fbUsedMiB,
      powerWatts: Math.round((IDLE_WATTS + util * (MAX_WATTS - IDLE_WATTS)) * 100) / 100,
    };
    const lines: string[] = [];
    for (const [field, name, help] of FAMILIES) {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
      for (const labels of gpus) lines.push(`${name}{${labels}} ${values[field]}`);
    }
    return `${lines.join("\n")}\n`;
  };
}

/** Serves `GET /metrics` with {@link dcgmPage} on `host:port` (port 0 = any free port). */
export async function startDcgmExporter(
  driver: EngineDriver,
  options: ResolvedEngineOptions,
  host: string,
  port: number,
): Promise<DcgmExporter> {
  const page = dcgmPage(driver, options, `${host}-sim`);
  const server: Server = createServer((req, res) => {
    if (req.method !== "GET" || req.url?.split("?")[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(page());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
