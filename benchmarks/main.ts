/**
 * `npm run bench -- <name> [args…]`: runs bench/<name>.ts, which prints its results as tables.
 * Benchmarks never gate CI on wall-clock time.
 */
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((f) => f.endsWith(".ts") && f !== "main.ts" && !f.endsWith(".test.ts"))
  .map((f) => f.slice(0, -3));

const [name, ...args] = process.argv.slice(2);
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <${available.join("|")}> [options]`);
  process.exit(name ? 2 : 0);
}
process.argv = [process.argv[0]!, join(here, `${name}.ts`), ...args];
await import(pathToFileURL(join(here, `${name}.ts`)).href);
