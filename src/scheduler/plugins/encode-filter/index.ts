/** `encode-filter`: endpoints that run multimodal encoders (llm-d.ai/role encode-capable). */
import { ENCODE_ROLES } from "../../../endpoints/endpoint.ts";
import { defineRoleFilter } from "../../framework/role-filter.ts";

/** Keeps role ∈ {encode, encode-prefill, encode-prefill-decode} (llm-d); unlabeled dropped. */
export const definition = defineRoleFilter({
  type: "encode-filter",
  stability: "beta",
  description: "Keeps encode-capable endpoints (llm-d.ai/role); unlabeled endpoints are dropped",
  roles: ENCODE_ROLES,
  keepUnlabeled: false,
});
