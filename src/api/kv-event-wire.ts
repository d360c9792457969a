/**
 * vLLM's KV-event wire (reference §4.1): the field order of each event in its positional (msgspec
 * `array_like`) encoding, which is also the key set of the map encoding. The simulator publishes
 * by it and the router's subscriber decodes by it.
 */

/** `BlockStored` fields after the tag. */
export const BLOCK_STORED_FIELDS = [
  "block_hashes",
  "parent_block_hash",
  "token_ids",
  "block_size",
  "lora_id",
  "medium",
  "lora_name",
  "extra_keys",
  "group_idx",
  "kv_cache_spec_kind",
  "kv_cache_spec_sliding_window",
] as const;

/** `BlockRemoved` fields after the tag (`remaining_copy_counts` only from the newest vLLM). */
export const BLOCK_REMOVED_FIELDS = ["block_hashes", "medium", "group_idx", "remaining_copy_counts"] as const;
