/**
 * The fleet's host of `staged-prefill` plans: a request with cuts first runs, in its replica's
 * engine, one-token requests of its prompt's leading tokens up to each cut, one after another, then
 * itself, as the gateway sends them. What the stages prefilled is the request's own work, so its
 * reported cached tokens leave it out.
 */
import type { AddRejection, EngineRequest, StepOutput } from "../engine/types.ts";
import type { Replica } from "./replica.ts";

/** What the runner needs of the fleet. */
export interface StageHost {
  /** Adds `request` to `replica`'s engine and lets it step. */
  add(replica: Replica, request: EngineRequest): AddRejection | null;
  /** A stage or the request itself was refused: the request fails with `reason`. */
  fail(id: string, reason: string): void;
}

interface Staged {
  request: EngineRequest;
  replica: Replica;
  cuts: readonly number[];
  /** Index of the stage in the engine; `cuts.length` once the request itself runs. */
  next: number;
  /** Prompt tokens the stages prefilled (not found cached). */
  prefilled: number;
}

const stageId = (id: string, stage: number) => `${id}~stage-${stage}`;

/** Runs the plans; one per fleet. */
export class StagedPrefills {
  /** By the id of the stage in an engine. */
  private readonly byStage = new Map<string, Staged>();
  /** By request id, from the first stage until the request's first token. */
  private readonly byRequest = new Map<string, Staged>();

  constructor(private readonly host: StageHost) {}

  /** Starts `request` on `replica` with its first stage. */
  start(replica: Replica, request: EngineRequest, cuts: readonly number[]): AddRejection | null {
    const staged: Staged = { request, replica, cuts, next: 0, prefilled: 0 };
    this.byRequest.set(request.id, staged);
    const rejection = this.addStage(staged);
    if (rejection) this.byRequest.delete(request.id);
    return rejection;
  }

  /** True for the output of a stage (not the client's request). */
  owns(id: string): boolean {
    return this.byStage.has(id);
  }

  /** A stage's step output: counts what it prefilled; once it finished, the next stage or the request runs. */
  stageOutput(output: StepOutput): void {
    const staged = this.byStage.get(output.id)!;
    if (output.first) staged.prefilled += staged.cuts[staged.next]! - output.cachedTokens;
    if (!output.finished) return;
    this.byStage.delete(output.id);
    staged.next++;
    const rejection =
      staged.next < staged.cuts.length
        ? this.addStage(staged)
        : this.host.add(staged.replica, staged.request);
    if (rejection) {
      this.byRequest.delete(staged.request.id);
      this.host.fail(staged.request.id, rejection.reason);
    }
  }

  /** The cached tokens to report for a request's first token: the engine's, less what its stages prefilled. */
  reportedCached(id: string, cachedTokens: number): number {
    const staged = this.byRequest.get(id);
    if (!staged) return cachedTokens;
    this.byRequest.delete(id);
    return Math.max(0, cachedTokens - staged.prefilled);
  }

  /** Forgets request `id`, aborting its stage in the engine if one runs; true when it did. */
  abort(id: string): boolean {
    const staged = this.byRequest.get(id);
    if (!staged) return false;
    this.forget(staged);
    return staged.next < staged.cuts.length && staged.replica.engine.abort(stageId(id, staged.next));
  }

  /** `replica` died: its stages are gone with its engine. */
  replicaDied(replica: Replica): void {
    for (const staged of this.byRequest.values()) if (staged.replica === replica) this.forget(staged);
  }

  private forget(staged: Staged): void {
    this.byStage.delete(stageId(staged.request.id, staged.next));
    this.byRequest.delete(staged.request.id);
  }

  private addStage(staged: Staged): AddRejection | null {
    const id = stageId(staged.request.id, staged.next);
    const promptTokens = staged.request.promptTokens.subarray(0, staged.cuts[staged.next]);
    this.byStage.set(id, staged);
    const rejection = this.host.add(staged.replica, { ...staged.request, id, promptTokens, maxTokens: 1 });
    if (rejection) this.byStage.delete(id);
    return rejection;
  }
}
