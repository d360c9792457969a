/**
 * Worker-thread entry of `WorkerEncoder`: loads the tokenizer named in `workerData.name` and
 * answers each `EncodeMessage` with each text's ids (as completions prompts when `prompt`), written
 * into a new conversation array when its `build` asks for one (`buildIds`; the array is shared
 * memory), else in their own buffers, transferred.
 */
import { parentPort, workerData } from "node:worker_threads";
import { buildIds } from "./conversation-ids.ts";
import { parseTokenizerName, loadTokenizer } from "./registry.ts";
import { type EncodedMessage, type EncodeMessage, mustBuild } from "./worker-encoder.ts";

const name = parseTokenizerName(String((workerData as { name?: unknown }).name));
if (!name) throw new Error(`encode worker: unknown tokenizer ${String(workerData)}`);
const tokenizer = loadTokenizer(name);

parentPort!.on("message", ({ id, texts, prompt, build }: EncodeMessage) => {
  const ids = texts.map((text) => (prompt ? tokenizer.encodePrompt(text) : tokenizer.encode(text)));
  if (build && mustBuild(build, ids)) {
    const built = buildIds(new Uint32Array(build.source, 0, build.prefix), ids, build.room);
    const reply: EncodedMessage = {
      id,
      ids: built.parts,
      built: { buffer: built.buffer, length: built.length },
    };
    parentPort!.postMessage(reply);
    return;
  }
  parentPort!.postMessage(
    { id, ids, built: null } satisfies EncodedMessage,
    ids.map((a) => a.buffer as ArrayBuffer),
  );
});
