/**
 * Worker-thread entry of `WorkerEncoder`: loads the tokenizer named in `workerData.name` and
 * answers `{id, texts, prompt}` with `{id, ids}`: each text's ids (as completions prompts when
 * `prompt`), buffers transferred.
 */
import { parentPort, workerData } from "node:worker_threads";
import { parseTokenizerName, loadTokenizer } from "./registry.ts";

const name = parseTokenizerName(String((workerData as { name?: unknown }).name));
if (!name) throw new Error(`encode worker: unknown tokenizer ${String(workerData)}`);
const tokenizer = loadTokenizer(name);

parentPort!.on("message", ({ id, texts, prompt }: { id: number; texts: string[]; prompt: boolean }) => {
  const ids = texts.map((text) => (prompt ? tokenizer.encodePrompt(text) : tokenizer.encode(text)));
  parentPort!.postMessage(
    { id, ids },
    ids.map((a) => a.buffer as ArrayBuffer),
  );
});
