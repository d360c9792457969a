/**
 * The garbage collector's pauses over a stretch of a benchmark, from `perf_hooks`' `gc` entries
 * (no `--expose-gc` needed): how many collections there were, how many of them full, and how long
 * the longest took.
 */
import { constants, type PerformanceEntry, PerformanceObserver } from "node:perf_hooks";

/** What the collector did between `watchGc()` and its `stop()`. */
export interface GcPauses {
  /** Every collection (scavenges, incremental marking, full) and their longest and total pause, ms. */
  all: number;
  longestMs: number;
  totalMs: number;
  /** Full (mark-sweep-compact) collections and the longest of them, ms. */
  major: number;
  longestMajorMs: number;
  /** Each collection: when it started (`performance.now()` time), its pause, and its kind. */
  entries: GcEntry[];
}

/** One collection as `perf_hooks` reports it. */
export interface GcEntry {
  startMs: number;
  ms: number;
  kind: "minor" | "major" | "incremental" | "weakcb";
}

const KINDS: Record<number, GcEntry["kind"]> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weakcb",
};

/** Starts recording GC entries; `stop` resolves with what was recorded. */
export function watchGc(): { stop(): Promise<GcPauses> } {
  const pauses: GcPauses = { all: 0, longestMs: 0, totalMs: 0, major: 0, longestMajorMs: 0, entries: [] };
  const record = (entries: PerformanceEntry[]) => {
    for (const entry of entries) {
      pauses.all++;
      pauses.totalMs += entry.duration;
      pauses.longestMs = Math.max(pauses.longestMs, entry.duration);
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0;
      pauses.entries.push({ startMs: entry.startTime, ms: entry.duration, kind: KINDS[kind] ?? "minor" });
      if (kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
      pauses.major++;
      pauses.longestMajorMs = Math.max(pauses.longestMajorMs, entry.duration);
    }
  };
  const observer = new PerformanceObserver((list) => record(list.getEntries()));
  observer.observe({ entryTypes: ["gc"] });
  return {
    async stop() {
      await new Promise((resolve) => setImmediate(resolve));
      record(observer.takeRecords());
      observer.disconnect();
      return pauses;
    },
  };
}
