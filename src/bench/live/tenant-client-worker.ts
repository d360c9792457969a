/**
 * One client thread of `runTenantClients`: replays the scenario, sending only its tenant's
 * requests, from the time origin the parent posts; posts progress, then its records.
 */
import { parentPort, workerData } from "node:worker_threads";
import { loadScenario } from "../scenario.ts";
import { createWorkload } from "../workloads/index.ts";
import { SyntheticPromptBuilder } from "../workloads/synthetic-prompt.ts";
import type { WorkloadRequest } from "../workloads/types.ts";
import { runLive } from "./load-generator.ts";
import type { StartMessage, TenantClientJob, TenantClientMessage } from "./tenant-clients.ts";

const job = workerData as TenantClientJob;
const port = parentPort!;
const post = (m: TenantClientMessage) => port.postMessage(m);

/** The tenant whose thread sends `request`: its objective, else the first tenant. */
function tenantOf(request: WorkloadRequest): string {
  const objective = request.objective;
  return objective !== undefined && job.tenants.includes(objective) ? objective : job.tenants[0]!;
}

const scenario = loadScenario(job.scenarioFile, [...job.overrides]);
const durationMs = scenario.durationS * 1000;
port.once("message", async ({ epochMs }: StartMessage) => {
  const records = await runLive({
    url: job.url,
    model: scenario.model,
    workload: createWorkload(scenario.workload, { seed: scenario.seed, durationMs }),
    prompts: new SyntheticPromptBuilder(),
    durationMs,
    timeScale: job.timeScale,
    blockTokens: job.blockTokens,
    objectives: scenario.objectives,
    sends: (request) => tenantOf(request) === job.tenant,
    startedAt: epochMs - performance.timeOrigin,
    onProgress: (elapsedMs, inFlight) => post({ kind: "progress", elapsedMs, inFlight }),
  });
  post({ kind: "done", records });
});
post({ kind: "ready" });
