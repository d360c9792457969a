/** The `llmd` command line: one subcommand per module in ./commands. */
import { Command } from "commander";
import { commands } from "./commands/index.ts";

const program = new Command("llmd")
  .description("Kubernetes-native LLM inference router, flow control and vLLM-compatible simulator")
  .showHelpAfterError();

for (const register of commands) register(program);

await program.parseAsync(process.argv);
