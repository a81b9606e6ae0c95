// Throughput of the original TF.js Universal Sentence Encoder Lite (tokenization included) on the
// first N texts of a BEIR corpus, embedded one batch at a time; the baseline the converted model is
// compared against.
//
//   node models/use_lite/bench_reference.mjs --ref-dir DIR --package-dir DIR \
//       --corpus ../shared/data/arguana/corpus.jsonl --count 200 --batch 32
import { loadReference, parseArgs, readJsonl } from "./reference.mjs";

async function main() {
  const args = parseArgs(process.argv.slice(2), {
    refDir: "models/cache/reference-runtime",
    packageDir: "models/cache/use-lite/package",
    corpus: "../shared/data/arguana/corpus.jsonl",
    count: "200",
    batch: "32",
  });
  const count = Number.parseInt(args.count, 10);
  const batch = Number.parseInt(args.batch, 10);
  if (!(count > 0) || !(batch > 0)) throw new Error(`--count and --batch must be positive integers`);
  const texts = readJsonl(args.corpus).slice(0, count).map((row) => `${row.title ?? ""} ${row.text}`.trim());
  if (texts.length < count) throw new Error(`${args.corpus} holds only ${texts.length} documents`);
  const { model, core } = await loadReference(args.refDir, args.packageDir);
  await model.embed(texts.slice(0, Math.min(batch, texts.length)));  // warm-up: kernel set-up
  const started = process.hrtime.bigint();
  for (let start = 0; start < texts.length; start += batch) {
    await model.embed(texts.slice(start, start + batch));
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  console.log(JSON.stringify({
    backend: core.getBackend(), documents: texts.length, batch, seconds: Number(seconds.toFixed(3)),
    docs_per_second: Number((texts.length / seconds).toFixed(1)),
  }));
}

main().catch((error) => {
  console.error(`bench_reference.mjs: ${error.message}`);
  process.exit(1);
});
