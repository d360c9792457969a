/**
 * One client thread of `runTenantClients`: replays the scenario, sending only its tenant's
 * requests, from the time origin the parent posts; posts progress, then its records.
 */
import { parentPort, workerData } from "node:worker_threads";
import { loadScenario } from "../workload/scenario.ts";
import type { WorkloadRequest } from "../workload/types.ts";
import { runLive, scenarioReplay } from "./load-generator.ts";
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
port.once("message", async ({ epochMs }: StartMessage) => {
  const records = await runLive({
    ...scenarioReplay(scenario),
    url: job.url,
    timeScale: job.timeScale,
    blockTokens: job.blockTokens,
    sends: (request) => tenantOf(request) === job.tenant,
    startedAt: epochMs - performance.timeOrigin,
    onProgress: (elapsedMs, inFlight) => post({ kind: "progress", elapsedMs, inFlight }),
  });
  post({ kind: "done", records });
});
post({ kind: "ready" });
