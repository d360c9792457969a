/** `decode-filter`: endpoints that can decode (llm-d.ai/role decode-capable, or unlabeled). */
import { DECODE_ROLES } from "../../../endpoints/endpoint.ts";
import { defineRoleFilter } from "../../framework/role-filter.ts";

/** Keeps role ∈ {decode, prefill-decode, both, encode-prefill-decode} or no role label (llm-d). */
export const definition = defineRoleFilter({
  type: "decode-filter",
  stability: "beta",
  description: "Keeps decode-capable endpoints (llm-d.ai/role) and unlabeled ones",
  roles: DECODE_ROLES,
  keepUnlabeled: true,
});
