/** `prefill-filter`: endpoints that can prefill (llm-d.ai/role prefill-capable; unlabeled excluded). */
import { PREFILL_ROLES } from "../../../endpoints/endpoint.ts";
import { defineRoleFilter } from "../../framework/role-filter.ts";

/** Keeps role ∈ {prefill, encode-prefill, prefill-decode, both, encode-prefill-decode} (llm-d). */
export const definition = defineRoleFilter({
  type: "prefill-filter",
  stability: "beta",
  description: "Keeps prefill-capable endpoints (llm-d.ai/role); unlabeled endpoints are dropped",
  roles: PREFILL_ROLES,
  keepUnlabeled: false,
});
