// Loads the original TF.js Universal Sentence Encoder Lite through the reference runtime
// (@energetic-ai/embeddings + @energetic-ai/core 0.2.0, installed with npm into REF_DIR) and the
// weights of an unpacked model package, so golden values come from the exact published model.
import { createRequire } from "node:module";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

export function parseArgs(argv, defaults) {
  const args = { ...defaults };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i];
    if (!key.startsWith("--") || i + 1 >= argv.length) {
      throw new Error(`bad argument '${key}': expected --name value pairs, known: ${Object.keys(defaults).join(", ")}`);
    }
    const name = key.slice(2).replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (!(name in defaults)) throw new Error(`unknown option ${key}; known: ${Object.keys(defaults).join(", ")}`);
    args[name] = argv[i + 1];
  }
  return args;
}

export async function loadReference(refDir, packageDir) {
  const manifest = path.resolve(refDir, "package.json");
  if (!existsSync(manifest)) {
    throw new Error(`${manifest} not found: install the runtime with ` +
      `'npm install --prefix ${refDir} @energetic-ai/embeddings@0.2.0 @energetic-ai/core@0.2.0'`);
  }
  const modelJson = path.resolve(packageDir, "dist", "model.json");
  const vocabJson = path.resolve(packageDir, "dist", "vocab.json");
  for (const file of [modelJson, vocabJson]) {
    if (!existsSync(file)) throw new Error(`${file} not found: run models/use_lite/fetch.sh first`);
  }
  const require = createRequire(manifest);
  const core = require("@energetic-ai/core");
  const embeddings = require("@energetic-ai/embeddings");
  const vocabulary = JSON.parse(readFileSync(vocabJson, "utf-8"));
  const model = await embeddings.initModel(async () => ({
    model: await core.loadGraphModel(`file://${modelJson}`),
    vocabulary,
  }));
  return { model, core };
}

export function readJsonl(file) {
  return readFileSync(file, "utf-8").split("\n").filter((line) => line.trim()).map((line) => JSON.parse(line));
}
