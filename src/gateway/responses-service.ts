/**
 * The Responses API in the router: `POST /v1/responses` rehydrates the chain named by
 * `previous_response_id` from the store, sends the whole history through the request lifecycle to
 * a model server (stateless Responses or chat completions), renders the answer and stores the turn;
 * `GET /v1/responses/{id}`, `GET /v1/responses/{id}/input_items` and `DELETE /v1/responses/{id}`
 * read and delete stored responses. Every call is scoped to the caller's tenant.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { badRequest, LlmdError } from "../api/errors.ts";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "../api/json-depth.ts";
import { parseResponseEcho } from "../api/openai-request.ts";
import { renderChat } from "../api/prompt.ts";
import { outputItemId, outputMessage, parseInput, type ResponseItem } from "../api/responses.ts";
import type { TenantMap } from "../flow-control/identity.ts";
import { type InferenceDeps, serveRequest, withBody } from "./inference.ts";
import { flattenHeaders } from "./parse-request.ts";
import { sendError, sendJson } from "./respond.ts";
import {
  PREVIOUS_RESPONSE_ENDPOINT_ATTRIBUTE,
  RESPONSE_CHAIN_ATTRIBUTE,
} from "../scheduler/framework/data-keys.ts";
import type { SchedulingRequest } from "../scheduler/framework/types.ts";
import { type Generation, type ResponseEcho, responseObject } from "../responses/render.ts";
import { type CachedChain, ChainCache, EMPTY_CHAIN, extendChain, sameIds } from "../responses/chain-cache.ts";
import { ResponsesSink } from "./responses-sink.ts";
import {
  DEFAULT_STORE_LIMITS,
  type ResponseStore,
  type StoredItem,
  type StoreLimits,
} from "../responses/store.ts";
import { type ResponsesBackend, upstreamRequest } from "../responses/upstream.ts";

/** How the router serves the Responses API. */
export interface ResponsesOptions {
  store: ResponseStore;
  /** The API the model servers speak for these turns (default `chat`). */
  backend?: ResponsesBackend;
  limits?: Partial<StoreLimits>;
  /** Memory for rehydrated chains kept between turns (default 256 MiB). */
  chainCacheBytes?: number;
}

const DEFAULT_CHAIN_CACHE_BYTES = 256 * 1024 * 1024;

/** A turn's history: the previous chain (empty for a first turn) and, see `history`, its endpoint. */
interface History {
  chain: CachedChain;
  endpointKey?: string;
}

/** Fields the service reads itself; every other field is passed to the model server. */
const OWN_FIELDS = new Set([
  "model",
  "input",
  "instructions",
  "stream",
  "store",
  "previous_response_id",
  "conversation",
  "max_output_tokens",
  "temperature",
  "metadata",
  "tools",
]);

/** A store's refusal (an `LlmdError`) answers as it is; any other failure is 503 `store_unavailable`. */
const storeDown = (err: unknown) =>
  err instanceof LlmdError
    ? err
    : new LlmdError("store_unavailable", `the response store failed: ${(err as Error).message}`);
const previousNotFound = (id: string) =>
  new LlmdError("previous_response_not_found", `Previous response with id '${id}' not found.`, {
    param: "previous_response_id",
  });
const responseNotFound = (id: string) =>
  new LlmdError("response_not_found", `Response with id '${id}' not found.`);

/** A validated create request. */
interface CreateRequest {
  model: string;
  input: ResponseItem[];
  instructions: string | null;
  stream: boolean;
  store: boolean;
  previousResponseId: string | null;
  maxOutputTokens: number | null;
  temperature: number | null;
  metadata: Record<string, string>;
  tools: unknown[];
  passthrough: Record<string, unknown>;
}

function optional<T>(
  value: unknown,
  check: (v: unknown) => v is T,
  message: string,
  param: string,
): T | null | LlmdError {
  if (value === undefined || value === null) return null;
  return check(value) ? value : badRequest(message, param);
}

const isString = (v: unknown): v is string => typeof v === "string";
const isPositiveInt = (v: unknown): v is number => Number.isInteger(v) && (v as number) > 0;

/** Validates a create body → the request, or the 400 that answers it. */
export function parseCreate(body: Record<string, unknown>): CreateRequest | LlmdError {
  if (typeof body.model !== "string" || body.model === "") return badRequest("'model' is required", "model");
  if (body.input === undefined) return badRequest("'input' is required", "input");
  const input = parseInput(body.input);
  if (input instanceof LlmdError) return input;
  if (body.previous_response_id !== undefined && body.conversation !== undefined)
    return badRequest("'previous_response_id' cannot be used together with 'conversation'", "conversation");
  const fields = {
    instructions: optional(body.instructions, isString, "'instructions' must be a string", "instructions"),
    previousResponseId: optional(
      body.previous_response_id,
      isString,
      "'previous_response_id' must be a string",
      "previous_response_id",
    ),
    maxOutputTokens: optional(
      body.max_output_tokens,
      isPositiveInt,
      "'max_output_tokens' must be a positive integer",
      "max_output_tokens",
    ),
  };
  for (const value of Object.values(fields)) if (value instanceof LlmdError) return value;
  const echo = parseResponseEcho(body, fields.instructions as string | null);
  if (!echo.ok) return echo.error;
  if (body.stream !== undefined && typeof body.stream !== "boolean")
    return badRequest("'stream' must be a boolean", "stream");
  if (body.store !== undefined && typeof body.store !== "boolean")
    return badRequest("'store' must be a boolean", "store");
  const passthrough: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) if (!OWN_FIELDS.has(key)) passthrough[key] = value;
  return {
    model: body.model,
    input,
    instructions: fields.instructions as string | null,
    stream: body.stream === true,
    store: body.store !== false,
    previousResponseId: fields.previousResponseId as string | null,
    maxOutputTokens: fields.maxOutputTokens as number | null,
    temperature: echo.value.temperature,
    metadata: echo.value.metadata,
    tools: echo.value.tools,
    passthrough,
  };
}

function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll("-", "")}`;
}

/** See the module comment. */
export class ResponsesService {
  private readonly backend: ResponsesBackend;
  private readonly limits: StoreLimits;
  /** Rehydrated chains by the id of their last response. */
  private readonly chains: ChainCache;

  constructor(
    private readonly options: ResponsesOptions,
    private readonly tenants: TenantMap | undefined,
  ) {
    this.backend = options.backend ?? "chat";
    this.limits = { ...DEFAULT_STORE_LIMITS, ...options.limits };
    this.chains = new ChainCache(options.chainCacheBytes ?? DEFAULT_CHAIN_CACHE_BYTES);
  }

  /** The caller's tenant: its name on a trusted edge, `""` otherwise (or without a valid key). */
  private tenantOf(headers: Record<string, string>): string {
    return this.tenants?.fromAuthorization(headers.authorization)?.name ?? "";
  }

  /** `POST /v1/responses`. Never rejects. */
  create(deps: InferenceDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
    return withBody(deps, req, res, (raw) => this.createFrom(deps, raw, req, res));
  }

  private async createFrom(
    deps: InferenceDeps,
    raw: Buffer,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    let body: unknown;
    try {
      body = JSON.parse(raw.toString("utf8"));
    } catch (err) {
      return sendError(res, badRequest(`invalid JSON body: ${(err as Error).message}`, null, "invalid_json"));
    }
    if (!body || typeof body !== "object" || Array.isArray(body))
      return sendError(res, badRequest("request body must be a JSON object", null, "invalid_json"));
    if (nestedDeeperThan(body))
      return sendError(
        res,
        badRequest(`request body nests deeper than ${MAX_JSON_DEPTH} levels`, null, "invalid_json"),
      );
    const request = parseCreate(body as Record<string, unknown>);
    if (request instanceof LlmdError) return sendError(res, request);
    const headers = flattenHeaders(req.headers);
    const tenant = this.tenantOf(headers);
    const history = await this.history(request.previousResponseId, tenant).catch(storeDown);
    if (history instanceof LlmdError) return sendError(res, history);
    await this.serve(deps, request, headers, tenant, history, res);
  }

  /**
   * The previous chain, or the error (unknown id, or the store failed). A cached chain is used when
   * the store confirms the response's chain is unchanged and fully stored. The endpoint that served
   * the previous turn comes along only when this router did not see that turn (another replica
   * served it, or this one restarted): where it did, its own prefix index knows the history, and
   * scoring weighs it against load as for any request.
   */
  private async history(id: string | null, tenant: string): Promise<History | LlmdError> {
    if (id === null) return { chain: EMPTY_CHAIN };
    const { store } = this.options;
    const previous = await store.get(id, tenant);
    if (!previous) return previousNotFound(id);
    const endpoint = previous.endpointKey ? { endpointKey: previous.endpointKey } : {};
    const ids = previous.chainItemIds;
    const cached = this.chains.get(id);
    if (cached && sameIds(cached.itemIds, ids) && (await store.countItems(ids)) === ids.length)
      return { chain: cached };
    const items = await store.items(ids);
    const chain = extendChain(
      EMPTY_CHAIN,
      items.map((i) => i.id),
      items.map((i) => i.item),
    );
    this.chains.set(id, chain);
    return { chain, ...endpoint };
  }

  private async serve(
    deps: InferenceDeps,
    request: CreateRequest,
    headers: Record<string, string>,
    tenant: string,
    history: History,
    res: ServerResponse,
  ): Promise<void> {
    const id = newId("resp");
    const input = request.input.map((item) => ({ id: newId("item"), item }));
    if (history.chain.itemIds.length + input.length + 1 > this.limits.maxChainItems) {
      const message = `the conversation would exceed ${this.limits.maxChainItems} items`;
      return sendError(res, badRequest(message, "previous_response_id"));
    }
    const echo: ResponseEcho = {
      id,
      model: request.model,
      createdAt: Math.floor(Date.now() / 1000),
      instructions: request.instructions,
      previousResponseId: request.previousResponseId,
      maxOutputTokens: request.maxOutputTokens,
      temperature: request.temperature,
      tools: request.tools,
      metadata: request.metadata,
      store: request.store,
    };
    const chain = extendChain(
      history.chain,
      input.map((i) => i.id),
      request.input,
    );
    const upstream = upstreamRequest(this.backend, {
      model: request.model,
      instructions: request.instructions,
      chain,
      stream: request.stream,
      maxOutputTokens: request.maxOutputTokens,
      temperature: request.temperature,
      passthrough: {
        ...request.passthrough,
        ...(request.tools.length > 0 ? { tools: request.tools } : {}),
      },
    });
    const body = Buffer.from(upstream.json);
    const scheduling: SchedulingRequest = {
      requestId: headers["x-request-id"] || randomUUID(),
      model: request.model,
      path: upstream.path,
      headers,
      promptText: renderChat(upstream.messages),
      body: upstream.body,
      bodyBytes: body.length,
      priority: 0,
      fairnessId: "",
      attributes: new Map<string, unknown>([
        [RESPONSE_CHAIN_ATTRIBUTE, chain.itemIds[0] ?? id],
        ...(history.endpointKey
          ? [[PREVIOUS_RESPONSE_ENDPOINT_ATTRIBUTE, history.endpointKey] as const]
          : []),
      ]),
    };
    const done = (generation: Generation, endpointKey: string | undefined) =>
      request.store
        ? this.store(echo, tenant, chain, input, generation, endpointKey)
        : Promise.resolve(undefined);
    await serveRequest(deps, scheduling, body, new ResponsesSink(res, echo, this.backend, done));
  }

  /** Stores a finished turn; the error that answers the client when the store fails. */
  private async store(
    echo: ResponseEcho,
    tenant: string,
    chain: CachedChain,
    input: readonly StoredItem[],
    generation: Generation,
    endpointKey: string | undefined,
  ): Promise<LlmdError | undefined> {
    const output = { id: outputItemId(echo.id), item: outputMessage(outputItemId(echo.id), generation.text) };
    const createdMs = echo.createdAt * 1000;
    try {
      await this.options.store.put(
        {
          response: responseObject(echo, [output.item], generation),
          tenant,
          inputItemIds: input.map((i) => i.id),
          chainItemIds: [...chain.itemIds, output.id],
          ...(endpointKey ? { endpointKey } : {}),
          expiresAtMs: createdMs + this.limits.ttlMs,
        },
        [...input, output],
      );
      this.chains.set(echo.id, extendChain(chain, [output.id], [output.item]));
      return undefined;
    } catch (err) {
      return storeDown(err);
    }
  }

  /** `GET /v1/responses/{id}`. */
  async retrieve(id: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const stored = await this.options.store
      .get(id, this.tenantOf(flattenHeaders(req.headers)))
      .catch(storeDown);
    if (stored instanceof LlmdError) return sendError(res, stored);
    if (!stored) return sendError(res, responseNotFound(id));
    sendJson(res, 200, stored.response);
  }

  /** `GET /v1/responses/{id}/input_items` (newest first unless `order=asc`, as OpenAI lists them). */
  async inputItems(
    id: string,
    query: URLSearchParams,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const tenant = this.tenantOf(flattenHeaders(req.headers));
    const items = await this.options.store
      .get(id, tenant)
      .then((stored) => (stored ? this.options.store.items(stored.inputItemIds) : undefined))
      .catch(storeDown);
    if (items instanceof LlmdError) return sendError(res, items);
    if (!items) return sendError(res, responseNotFound(id));
    const data = items.map(({ id: itemId, item }) => ({ ...item, id: itemId }));
    if (query.get("order") !== "asc") data.reverse();
    sendJson(res, 200, {
      object: "list",
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: false,
    });
  }

  /** `DELETE /v1/responses/{id}`. */
  async delete(id: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const deleted = await this.options.store
      .delete(id, this.tenantOf(flattenHeaders(req.headers)))
      .catch(storeDown);
    if (deleted instanceof LlmdError) return sendError(res, deleted);
    if (deleted) this.chains.delete(id);
    if (!deleted) return sendError(res, responseNotFound(id));
    sendJson(res, 200, { id, object: "response", deleted: true });
  }
}

const ITEM_PATH = /^\/v1\/responses\/([^/]+)(\/input_items)?$/;

/**
 * Routes `/v1/responses` paths to `service` (404 without one: the router was started without a
 * store). False when `path` is not a Responses path.
 */
export function routeResponses(
  service: ResponsesService | undefined,
  deps: InferenceDeps,
  method: string,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
): boolean {
  const path = url.pathname;
  if (path !== "/v1/responses" && !path.startsWith("/v1/responses/")) return false;
  if (!service) {
    sendError(res, new LlmdError("not_found", "the Responses API is not enabled on this router"));
    return true;
  }
  const notAllowed = () =>
    sendError(res, new LlmdError("method_not_allowed", `${method} is not allowed on ${path}`));
  if (path === "/v1/responses") {
    if (method === "POST") void service.create(deps, req, res);
    else notAllowed();
    return true;
  }
  const match = ITEM_PATH.exec(path);
  if (!match) sendError(res, new LlmdError("not_found", `no route for ${path}`));
  else if (match[2] && method === "GET") void service.inputItems(match[1]!, url.searchParams, req, res);
  else if (match[2]) notAllowed();
  else if (method === "GET") void service.retrieve(match[1]!, req, res);
  else if (method === "DELETE") void service.delete(match[1]!, req, res);
  else notAllowed();
  return true;
}
