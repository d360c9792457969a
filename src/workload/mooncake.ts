/**
 * Mooncake JSONL replay (open loop at recorded timestamps): `timestamp` (ms), `input_length`,
 * `output_length`, `hash_ids` (512-token prefix-chained blocks, global), optional `session_id`.
 */
import { ReplayClock, type ReplayOptions, replayWindow } from "./replay.ts";
import { readLines } from "./trace-files.ts";
import { type Arrival, makeRequest, type Segment, type Workload } from "./types.ts";

/** Mooncake's block size in tokens. */
export const MOONCAKE_BLOCK_TOKENS = 512;

/** One parsed trace row. */
export interface MooncakeRow {
  timestamp: number;
  input_length: number;
  output_length: number;
  hash_ids: number[];
  session_id?: string | number;
}

/** Options of a Mooncake replay. */
export interface MooncakeOptions extends ReplayOptions {
  path: string;
  /** Namespace of the ids (default `mc`; ids are global in a Mooncake trace). */
  ns?: string;
}

/** Parses Mooncake rows from JSONL lines. */
export function parseMooncake(lines: readonly string[]): MooncakeRow[] {
  return lines.map((line) => JSON.parse(line) as MooncakeRow);
}

/** Segments of a row (§5: n = ceil(L/B), the last block truncated to what remains). */
export function mooncakeSegments(
  row: MooncakeRow,
  ns = "mc",
  blockTokens = MOONCAKE_BLOCK_TOKENS,
): Segment[] {
  const segments: Segment[] = [];
  let left = row.input_length;
  for (const id of row.hash_ids) {
    if (left <= 0) break;
    segments.push({ ns, id, tokens: Math.min(blockTokens, left) });
    left -= blockTokens;
  }
  return segments;
}

/** Open-loop replay of rows. */
export class MooncakeWorkload implements Workload {
  readonly name: string;
  private cursor = 0;
  private readonly clock: ReplayClock;

  constructor(
    private readonly rows: readonly MooncakeRow[],
    private readonly options: Omit<MooncakeOptions, "path">,
    name = "mooncake",
  ) {
    this.name = name;
    this.clock = new ReplayClock(options);
  }

  /** Loads `options.path` (resolved under the traces directory). */
  static load(options: MooncakeOptions): MooncakeWorkload {
    const rows = parseMooncake(readLines(options.path));
    return new MooncakeWorkload(
      replayWindow(rows, (row) => row.timestamp, options),
      options,
    );
  }

  nextArrival(): Arrival | undefined {
    const index = this.cursor++;
    const row = this.rows[index];
    if (!row) return undefined;
    const ns = this.options.ns ?? "mc";
    const extra = row.session_id === undefined ? {} : { sessionId: String(row.session_id) };
    const request = makeRequest(`mc-${index}`, mooncakeSegments(row, ns), row.output_length, extra);
    return { atMs: this.clock.next(row.timestamp), request };
  }

  onComplete(): Arrival[] {
    return [];
  }
}
