/**
 * `session-id-producer` (reference §2.5): publishes the request's session id, read from one
 * header or one cookie, as the request attribute `SessionID`.
 */
import { z } from "zod";
import { SESSION_ID } from "../../framework/data-keys.ts";
import type { DataProducer, SchedulingContext } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";

const parameters = z
  .strictObject({ headerName: z.string().min(1).optional(), cookieName: z.string().min(1).optional() })
  .refine((p) => (p.headerName === undefined) !== (p.cookieName === undefined), {
    error: "exactly one of headerName, cookieName is required",
  });

/** Validated parameters of `session-id-producer`. */
export type SessionIdParams = z.infer<typeof parameters>;

/** Value of cookie `name` in a `Cookie` header, if present. */
export function cookieValue(cookieHeader: string | undefined, name: string): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

class SessionIdProducer implements DataProducer {
  readonly type = "session-id-producer";

  constructor(
    readonly name: string,
    private readonly params: SessionIdParams,
  ) {}

  produce(ctx: SchedulingContext): void {
    const { headerName, cookieName } = this.params;
    const headers = ctx.request.headers;
    const id = headerName ? headers[headerName.toLowerCase()] : cookieValue(headers.cookie, cookieName!);
    if (id) ctx.request.attributes.set(SESSION_ID, id);
  }
}

/** Registry entry for `session-id-producer`. */
export const definition: PluginDefinition<SessionIdParams> = {
  type: "session-id-producer",
  stability: "beta",
  description: "Publishes the session id from a header or cookie as request attribute SessionID",
  parameters,
  produces: [SESSION_ID],
  create: (params, env) => new SessionIdProducer(env.name, params),
};
