/**
 * The `llmd` command line: one subcommand per module in ./commands. A command that fails to start
 * (bad flag, config or file) prints one line naming the problem and exits 1, without a stack trace.
 */
import { Command } from "commander";
import { commands } from "./commands/index.ts";
import { startupFailureLine } from "./flags.ts";

const program = new Command("llmd")
  .description("Kubernetes-native LLM inference router, flow control and vLLM-compatible simulator")
  .showHelpAfterError();

for (const register of commands) register(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  process.stderr.write(`${startupFailureLine(err)}\n`);
  process.exit(1);
}
