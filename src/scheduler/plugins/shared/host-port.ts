/** How P/D and data-parallel headers name an endpoint. */
import type { Endpoint } from "../../../endpoints/endpoint.ts";

/** `address:port` of an endpoint, bracketing IPv6 addresses (Go's `net.JoinHostPort`). */
export function hostPort(endpoint: Endpoint): string {
  const { address, port } = endpoint.metadata;
  return address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
}
