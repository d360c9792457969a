/**
 * Parameter-schema building blocks for plugin definitions, with error messages in the config
 * loader's style (`expected a positive integer, got -64`; the loader appends the value).
 */
import { z } from "zod";

/** A strict object schema with no fields: for plugins that take no parameters. */
export const noParameters = z.strictObject({});

/** An integer ≥ 1. */
export const positiveInt = () =>
  z
    .number({ error: "expected a positive integer" })
    .int({ error: "expected a positive integer" })
    .positive({ error: "expected a positive integer" });

/** A finite number ≥ 0. */
export const nonNegativeNumber = () =>
  z
    .number({ error: "expected a non-negative number" })
    .finite({ error: "expected a non-negative number" })
    .nonnegative({ error: "expected a non-negative number" });

/** Picker parameter: how many endpoints to return, best first (llm-d default 1). */
export const pickerParameters = z.strictObject({ maxNumOfEndpoints: positiveInt().default(1) });

/** Parsed picker parameters. */
export type PickerParameters = z.output<typeof pickerParameters>;
