/**
 * Azure LLM inference trace 2023 (CSV: `TIMESTAMP,ContextTokens,GeneratedTokens`): open-loop
 * arrivals and lengths, no prefix information, so every prompt is unique content.
 */
import { ReplayClock, type ReplayOptions, replayWindow } from "./replay.ts";
import { readLines } from "./trace-files.ts";
import { type Arrival, blockSegments, makeRequest, type Workload } from "./types.ts";

/** One parsed row: arrival offset (ms from the first row) and lengths. */
export interface AzureRow {
  atMs: number;
  input: number;
  output: number;
}

/** Parses the CSV (header line first). Timestamps have 7 fractional digits; sub-ms is dropped. */
export function parseAzure(lines: readonly string[]): AzureRow[] {
  const rows: AzureRow[] = [];
  let origin: number | undefined;
  for (const line of lines.slice(1)) {
    const [stamp, input, output] = line.split(",");
    const ms = Date.parse(`${stamp!.trim().slice(0, 23).replace(" ", "T")}Z`);
    origin ??= ms;
    rows.push({ atMs: ms - origin, input: Number(input), output: Number(output) });
  }
  return rows;
}

/** Options of an Azure replay. */
export interface AzureOptions extends ReplayOptions {
  path: string;
  /** Traffic-class label (e.g. `code`, `conv`). */
  kind?: string;
}

/** Open-loop replay of Azure rows. */
export class AzureWorkload implements Workload {
  readonly name = "azure";
  private cursor = 0;
  private readonly clock: ReplayClock;

  constructor(
    private readonly rows: readonly AzureRow[],
    private readonly options: Omit<AzureOptions, "path">,
  ) {
    this.clock = new ReplayClock(options);
  }

  /** Loads `options.path` under the traces directory. */
  static load(options: AzureOptions): AzureWorkload {
    const rows = parseAzure(readLines(options.path));
    return new AzureWorkload(
      replayWindow(rows, (row) => row.atMs, options),
      options,
    );
  }

  nextArrival(): Arrival | undefined {
    const index = this.cursor++;
    const row = this.rows[index];
    if (!row) return undefined;
    const kind = this.options.kind ?? "azure";
    const segments = blockSegments(`azure:${kind}:${index}`, 0, Math.max(1, row.input), 512);
    const request = makeRequest(`az-${kind}-${index}`, segments, row.output, { kind });
    return { atMs: this.clock.next(row.atMs), request };
  }

  onComplete(): Arrival[] {
    return [];
  }
}
