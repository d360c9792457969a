/**
 * llm-d's `file-discovery`: endpoints from a YAML file, reloaded without restart. The directory is
 * watched rather than the file, so editors and Kubernetes ConfigMaps that replace the file (rename
 * or symlink swap) keep being followed; a slow resync catches events the watcher missed. A file
 * that is missing, too large or invalid keeps the previous set and is logged.
 */
import { type FSWatcher, watch } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { LlmdError } from "../../api/errors.ts";
import type { EndpointMetadata } from "../endpoint.ts";
import { MAX_ENDPOINTS_FILE_BYTES, parseEndpointsFile } from "./endpoints-file.ts";
import type { EndpointSetListener, EndpointSource } from "./source.ts";

/** Options of {@link fileDiscoverySource} (`path`, `watchFile` are llm-d's parameter names). */
export interface FileDiscoveryOptions {
  path: string;
  /** Reload when the file changes (default true). */
  watchFile?: boolean;
  /** Re-read period in ms as a safety net for missed events (default 5000; 0 = off). */
  resyncIntervalMs?: number;
  /** Quiet time after a change event before reloading, in ms (default 25). */
  debounceMs?: number;
  /** Reload problems; defaults to stderr. */
  log?: (level: "info" | "warn", message: string) => void;
}

/** A source reading and following an endpoints file. `start` rejects when the first read is invalid. */
export function fileDiscoverySource(options: FileDiscoveryOptions): EndpointSource {
  return new FileDiscovery(options);
}

class FileDiscovery implements EndpointSource {
  readonly kind = "file";
  private onUpdate: EndpointSetListener | undefined;
  private lastText: string | undefined;
  /** Last problem reported, so a bad file is logged once, not at every resync. */
  private lastWarning: string | undefined;
  private watcher: FSWatcher | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private resync: NodeJS.Timeout | undefined;
  private reloading: Promise<void> = Promise.resolve();
  private readonly log: NonNullable<FileDiscoveryOptions["log"]>;

  constructor(private readonly options: FileDiscoveryOptions) {
    this.log = options.log ?? ((level, m) => process.stderr.write(`[llmd file-discovery] ${level}: ${m}\n`));
  }

  async start(onUpdate: EndpointSetListener): Promise<void> {
    const text = await this.read();
    onUpdate(parseEndpointsFile(text));
    this.lastText = text;
    this.onUpdate = onUpdate;
    if (this.options.watchFile === false) return;
    this.arm();
    const resyncMs = this.options.resyncIntervalMs ?? 5000;
    if (resyncMs > 0) {
      this.resync = setInterval(() => this.schedule(0), resyncMs);
      this.resync.unref();
    }
  }

  async stop(): Promise<void> {
    this.onUpdate = undefined;
    this.watcher?.close();
    this.watcher = undefined;
    clearTimeout(this.debounce);
    clearInterval(this.resync);
    await this.reloading;
  }

  /** Watches the directory; re-armed by resyncs if the directory itself went away. */
  private arm(): void {
    try {
      this.watcher = watch(dirname(this.options.path), { persistent: false }, () =>
        this.schedule(this.options.debounceMs ?? 25),
      );
      this.watcher.on("error", (err) => {
        this.log("warn", `watch on ${dirname(this.options.path)} failed: ${err.message}`);
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch (err) {
      this.log("warn", `cannot watch ${dirname(this.options.path)}: ${(err as Error).message}`);
    }
  }

  private schedule(delayMs: number): void {
    if (!this.onUpdate) return;
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      this.reloading = this.reloading.then(() => this.reload());
    }, delayMs);
    this.debounce.unref();
  }

  private async reload(): Promise<void> {
    if (!this.watcher && this.onUpdate) this.arm();
    let text: string;
    let endpoints: EndpointMetadata[];
    try {
      text = await this.read();
      if (text === this.lastText) return;
      endpoints = parseEndpointsFile(text);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      if (why !== this.lastWarning)
        this.log("warn", `${this.options.path}: ${why}; keeping the previous endpoints`);
      this.lastWarning = why;
      return;
    }
    this.lastText = text;
    this.lastWarning = undefined;
    this.log("info", `${this.options.path}: reloaded ${endpoints.length} endpoints`);
    this.onUpdate?.(endpoints);
  }

  private async read(): Promise<string> {
    const { path } = this.options;
    try {
      const { size } = await stat(path);
      if (size > MAX_ENDPOINTS_FILE_BYTES) throw tooLarge(path, size);
      return await readFile(path, "utf8");
    } catch (err) {
      if (err instanceof LlmdError) throw err;
      throw new LlmdError("endpoints_file_unreadable", `cannot read ${path}: ${(err as Error).message}`);
    }
  }
}

function tooLarge(path: string, size: number): LlmdError {
  return new LlmdError(
    "invalid_endpoints_file",
    `${path} is ${size} bytes, over ${MAX_ENDPOINTS_FILE_BYTES}`,
    {},
  );
}
