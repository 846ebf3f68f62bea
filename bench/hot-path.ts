/**
 * The per-message path of one streamed `session/update`, stage by stage (µs per message, in this
 * process): what a chunk costs from the agent's line to the client's line, so changes to the hot
 * path are measured one at a time. `node dist/bench/hot-path.js [n]`.
 */

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { editedForward } from "../runtime/components/edited-forward.js";
import { forwardMarker, unchangedForward } from "../runtime/components/unchanged-forward.js";
import { iJsonViolation } from "../runtime/protocol/i-json.js";
import { classify } from "../runtime/protocol/json-rpc.js";
import { LineBuffer } from "../runtime/protocol/line-buffer.js";
import { nestsDeeperThan } from "../runtime/protocol/nesting.js";
import { parseLine } from "../runtime/protocol/parse-line.js";
import { attachRaw, rawParamsPieces, serialize, withMember } from "../runtime/protocol/raw-json.js";
import { type Call, unwrap, wrap } from "../runtime/routing/envelope.js";
import { CanonicalHost } from "../runtime/sandbox/canonical-host.js";
import { loadComponent } from "../runtime/sandbox/component-loader.js";
import { DEFAULT_LIMITS, Delivery } from "../runtime/sandbox/sandbox.js";
import { ThreadSandbox } from "../runtime/sandbox/thread-sandbox.js";

const N = Number(process.argv[2] ?? 200_000);
const utf8 = new TextDecoder("utf-8", { fatal: true });
const root = fileURLToPath(new URL("../..", import.meta.url));
const line = (i: number) =>
  JSON.stringify({
    jsonrpc: "2.0",
    method: "session/update",
    params: { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `chunk ${i}` } } },
  });
const lines = Array.from({ length: 1000 }, (_, i) => line(i));

/** Mean µs per message of `fn`, each call handling `perCall` messages. */
function time(name: string, n: number, fn: (i: number) => unknown, perCall = 1): number {
  for (let i = 0; i < Math.min(n, 20_000); i++) fn(i);
  const t = performance.now();
  for (let i = 0; i < n; i++) fn(i);
  const us = ((performance.now() - t) * 1000) / (n * perCall);
  console.log(`| ${name} | ${us.toFixed(3)} |`);
  return us;
}

console.log("| stage | µs per message |\n|---|---|");
const block = Buffer.from(lines.join("\n") + "\n");
const lb = new LineBuffer();
time("LineBuffer.push (1000-line chunks)", N / 1000, () => lb.push(block), 1000);
const parsed = lines.map((l) => attachRaw(JSON.parse(l), l));
time("JSON.parse", N, (i) => JSON.parse(lines[i % 1000]));
time("JSON.parse + attachRaw", N, (i) => attachRaw(JSON.parse(lines[i % 1000]), lines[i % 1000]));
time("parseLine (what the NDJSON channel does)", N, (i) => parseLine(lines[i % 1000]));
time("nestsDeeperThan", N, (i) => nestsDeeperThan(parsed[i % 1000]));
time("iJsonViolation (on every proxy output)", N, (i) => iJsonViolation(lines[i % 1000]));
time("classify", N, (i) => classify(parsed[i % 1000]));
const wrapped = parsed.map((m) => wrap(m as Call, "rfd"));
time("wrap (raw splice)", N, (i) => wrap(parsed[i % 1000] as Call, "rfd"));
time("unwrap (raw splice)", N, (i) => unwrap(wrapped[i % 1000]));
time("serialize (raw, already built)", N, (i) => serialize(wrapped[i % 1000]));
// What a hop really pays: a new envelope whose lazy text is spliced on its first serialisation.
time("fresh wrap + first serialize", N, (i) => serialize(wrap(parsed[i % 1000] as Call, "rfd")));
time("JSON.stringify envelope", N, (i) => JSON.stringify(wrapped[i % 1000]));
// The first proxy's envelope of a line just read: its params' text must be found in the line.
time("line read and wrapped for the first proxy: JSON.parse + attachRaw (params found by a walk)", N, (i) =>
  serialize(wrap(attachRaw(JSON.parse(lines[i % 1000]), lines[i % 1000]) as Call, "rfd")),
);
time("line read and wrapped for the first proxy: parseLine (params' place known)", N, (i) =>
  serialize(wrap(parseLine(lines[i % 1000]) as Call, "rfd")),
);
// A 100 KB prompt given the next hop's id: the id's place must be found in the text (the last id
// member: a walk of the whole prompt), unless the reader proved where it lies.
const prompt = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "session/prompt",
  params: { sessionId: "s1", prompt: [{ type: "text", text: 'x"ü\n'.repeat(25_000) }] },
});
const promptN = Math.max(20, N / 1000);
time("100 KB prompt read, id spliced for the next hop: JSON.parse + attachRaw (id found by a walk)", promptN, () =>
  serialize(withMember(attachRaw(JSON.parse(prompt), prompt), "id", 9)),
);
time("100 KB prompt read, id spliced for the next hop: parseLine (id's place known)", promptN, () =>
  serialize(withMember(parseLine(prompt) as object, "id", 9)),
);

const cacheDir = mkdtempSync(join(tmpdir(), "cordon-hot-"));
const component = await loadComponent(`${root}proxies/dist/passthrough.wasm`, { cacheDir });
const configure = JSON.stringify({ jsonrpc: "2.0", method: "_cordon/configure", params: { name: "p", config: {} } });
const texts = wrapped.map((w) => serialize(w));
// The copy across the ABI, by string encoding (what `canonical-host.ts` does for each): a UTF-16
// component's code units, a UTF-8 one's bytes (the SDK's strings are UTF-16 inside, so a UTF-8
// guest would also transcode), and bytes that never become a JS string (a `list<u8>` channel).
const scratch = Buffer.from(new WebAssembly.Memory({ initial: 8 }).buffer);
const big = JSON.stringify({ text: 'x"ü\n'.repeat(25_000) });
for (const [label, text, n] of [
  ["200 B", texts[0], N],
  ["175 KB", big, Math.max(20, N / 1000)],
] as const) {
  const units = text.length * 2;
  time(`copy in, UTF-16 (${label})`, n, () => scratch.write(text, 0, units, "utf16le"));
  const bytes = scratch.write(text, 0, text.length * 3, "utf8");
  time(`copy in, UTF-8 (${label})`, n, () => scratch.write(text, 0, text.length * 3, "utf8"));
  scratch.write(text, 0, units, "utf16le");
  time(`copy out, UTF-16 to a string (${label})`, n, () => scratch.toString("utf16le", 0, units));
  scratch.write(text, 0, bytes, "utf8");
  time(`copy out, UTF-8 to a string (fatal TextDecoder) (${label})`, n, () => utf8.decode(scratch.subarray(0, bytes)));
  time(`copy out, bytes (no string) (${label})`, n, () => Uint8Array.prototype.slice.call(scratch, 0, bytes));
}

const plain = new CanonicalHost(component.module, { encodings: component.encodings });
plain.receive(configure);
time("guest receive, unmetered (CanonicalHost)", N, (i) => plain.receive(texts[i % 1000]));
// The output budget is per 10 s; this loop sends more than a real session would.
const sandbox = new ThreadSandbox(component, { ...DEFAULT_LIMITS, maxOutputMessagesPerWindow: 100 * N });
let outputs = 0;
await sandbox.start({ output: (m) => (outputs += m.length), failed: (f) => console.error(f) });
const { host, fuel } = sandbox as unknown as { host: CanonicalHost; fuel: WebAssembly.Global };
host.receive(configure);
// As the sandbox does before each delivery: the host sets the fuel counter.
time("guest receive, fuel-metered", N, (i) => {
  fuel.value = 10_000_000_000n;
  return host.receive(texts[i % 1000]);
});
const out = host.receive(texts[0])[0];
time("guest output JSON.parse + attachRaw", N, () => attachRaw(JSON.parse(out), out));
// From the guest's text to the text the next proxy gets: parse, classify, wrap, first serialisation.
time("guest output → routed (parse, classify, wrap, serialize)", N, () => {
  const message = attachRaw(JSON.parse(out), out);
  classify(message);
  return serialize(wrap(message as Call, "rfd"));
});
// The same output recognised as handing on what the guest was delivered (unchanged-forward.ts):
// no parse and no I-JSON scan; the envelope for the next proxy is the text built for this one.
const delivered = new Delivery(texts[0], wrapped[0]);
time("guest output → routed as an unchanged forward (recognise, wrap, serialize)", N, () => {
  const message = unchangedForward(delivered, out);
  return serialize(wrap(message as Call, "rfd"));
});
// What the SDK sends instead where Cordon offers it: the `_cordon/forward` marker, read at fixed places.
const marker = '{"jsonrpc":"2.0","method":"_cordon/forward"}';
time("guest output → routed as the _cordon/forward marker (read, wrap, serialize)", N, () => {
  const message = forwardMarker(delivered, marker);
  return serialize(wrap(message as Call, "rfd"));
});
// A chunk whose text the guest replaced (as redact does): written out, the edited text is parsed and
// I-JSON-scanned (admission) before it is routed; handed back as the edit alone, the host places the
// new value in the text it delivered (edited-forward.ts).
const text = '"chunk 0"';
const editedOut = out.replace(text, '"[redacted]"');
time("guest output, a chunk's text replaced → routed (parse, I-JSON scan, wrap, serialize)", N, () => {
  const message = attachRaw(JSON.parse(editedOut), editedOut);
  iJsonViolation(editedOut);
  return serialize(wrap(message as Call, "rfd"));
});
const at = rawParamsPieces(parsed[0])!.join("").indexOf(text);
const edit = `{"jsonrpc":"2.0","method":"_cordon/forward","params":{"at":${at},"end":${at + text.length},"value":"[redacted]"}}`;
time("guest output, a chunk's text replaced → routed as an edit (read, place, wrap, serialize)", N, () => {
  const routed = editedForward(delivered, edit);
  return serialize(wrap(routed!.message as Call, "rfd"));
});
// context's edit of the 100 KB prompt (a block put first in it), handed back as the edit: placing it
// needs params' members, which a walk past the prompt's text finds, unless the reader recorded
// them (parse-line.ts `objectAlone`). Each message is read fresh: an edit's walk records them too.
const promptParams = JSON.stringify(JSON.parse(prompt).params);
const first = promptParams.indexOf('{"type"');
const putFirst = `{"jsonrpc":"2.0","id":9,"method":"_cordon/forward","params":{"at":${first},"end":${first},"value":{"type":"text","text":"Rules."}}}`;
for (const [how, read] of [
  ["JSON.parse + attachRaw (members found by a walk)", () => attachRaw(JSON.parse(prompt), prompt)],
  ["parseLine (members recorded by the read)", () => parseLine(prompt) as object],
] as const) {
  const routed = editedForward(new Delivery(prompt, read()), putFirst);
  if (!routed?.checked) throw new Error(`the block was not placed as an edit (${how})`);
  time(`100 KB prompt read, a block put first by an edit and placed: ${how}`, promptN, () =>
    editedForward(new Delivery(prompt, read()), putFirst),
  );
}
// Through the sandbox's queue and drain, in batches of 100.
const batch = async (n: number) => {
  for (let i = 0; i < n; i += 100) {
    for (let k = 0; k < 100; k++) sandbox.deliver(texts[(i + k) % 1000]);
    await new Promise<void>((r) => setImmediate(r));
  }
};
await batch(20_000);
const t = performance.now();
await batch(N);
console.log(`| ThreadSandbox deliver → drain → output (batches of 100) | ${(((performance.now() - t) * 1000) / N).toFixed(3)} |`);
await sandbox.stop();
