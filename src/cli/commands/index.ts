/** Every subcommand registers itself on the root program; add new ones to this list. */
import type { Command } from "commander";
import { registerRouter } from "./router.ts";
import { registerBench } from "./bench.ts";
import { registerDoctor } from "./doctor.ts";
import { registerPlugins } from "./plugins.ts";
import { registerSidecar } from "./sidecar.ts";
import { registerSim } from "./sim.ts";
import { registerSimulate } from "./simulate.ts";
import { registerUp } from "./up.ts";

export type RegisterCommand = (program: Command) => void;

export const commands: RegisterCommand[] = [
  registerSim,
  registerSimulate,
  registerRouter,
  registerSidecar,
  registerUp,
  registerBench,
  registerPlugins,
  registerDoctor,
];
