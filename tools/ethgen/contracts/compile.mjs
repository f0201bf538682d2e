// Compiles contracts/*.sol with the pinned solc (package.json) and writes
// build/<Contract>.json ({contractName, abi, bytecode}) for the Go package
// to embed. Run `npm ci && npm run compile` after editing a contract; the
// outputs are committed so Go tests need neither node nor solc.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import solc from "solc";

const require = createRequire(import.meta.url);

const dir = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.join(dir, "build");
// cancun is the newest EVM every client of the dev chain supports; the dev
// chain runs later forks, which keep cancun semantics for this code.
const evmVersion = "cancun";

const sources = {};
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".sol")).sort()) {
  sources[f] = { content: fs.readFileSync(path.join(dir, f), "utf8") };
}
const input = {
  language: "Solidity",
  sources,
  settings: {
    evmVersion,
    optimizer: { enabled: true, runs: 200 },
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
  },
};
// Imports (@openzeppelin/contracts, pinned in package.json) are read from
// node_modules.
const findImports = (p) => {
  try {
    return { contents: fs.readFileSync(require.resolve(p), "utf8") };
  } catch (e) {
    return { error: String(e) };
  }
};
const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
let failed = false;
for (const e of output.errors || []) {
  // selfdestruct is deprecated (a warning) but the scenario needs it.
  console.error(e.formattedMessage);
  if (e.severity === "error") failed = true;
}
if (failed) process.exit(1);

fs.mkdirSync(outDir, { recursive: true });
for (const file of Object.keys(sources)) {
  for (const [name, c] of Object.entries(output.contracts[file])) {
    if (c.evm.bytecode.object === "") continue; // interfaces
    const out = {
      contractName: name,
      sourceName: file,
      compiler: "solc " + solc.version(),
      evmVersion,
      abi: c.abi,
      bytecode: "0x" + c.evm.bytecode.object,
    };
    fs.writeFileSync(path.join(outDir, name + ".json"), JSON.stringify(out, null, 1) + "\n");
    console.log("wrote build/" + name + ".json");
  }
}
