/** The non-test TypeScript files under a folder, for tests that read the source. */
import { readdirSync } from "node:fs";
import { join } from "node:path";

/** Every `.ts` file under `dir` (recursively), test files excluded. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}
