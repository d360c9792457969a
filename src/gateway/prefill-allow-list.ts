/**
 * The pool a sidecar's prefill legs may go to (`--enable-ssrf-protection`): the `host:port` of
 * every endpoint an endpoint source lists, followed as the source changes (an endpoints file is
 * reloaded on change), so a header cannot send a prefill leg anywhere outside the pool.
 */
import type { EndpointSource } from "../endpoints/sources/source.ts";
import type { PrefillAllowList } from "./sidecar.ts";
import { endpointOrigin } from "./upstreams.ts";

/** See the module comment. */
export class PoolAllowList implements PrefillAllowList {
  private hostPorts: ReadonlySet<string> = new Set();

  constructor(private readonly source: EndpointSource) {}

  /** Reads the source's first set (rejects when it is invalid) and follows its changes. */
  async start(): Promise<void> {
    await this.source.start((endpoints) => {
      this.hostPorts = new Set(endpoints.map((e) => endpointOrigin(e).slice("http://".length).toLowerCase()));
    });
  }

  stop(): Promise<void> {
    return this.source.stop();
  }

  allows(hostPort: string): boolean {
    return this.hostPorts.has(hostPort.toLowerCase());
  }
}
