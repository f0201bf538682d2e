// Asks our server for fee levels through the real @trezor/blockchain-link
// (its Blockbook worker, as Trezor Suite does) and prints the answer as
// one JSON line: what Suite shows a user when the server's config says
// alternative_estimate_fee (e2e/alt_fees_test.go compares it).
//
// usage: node trezor-fees.mjs <base url> <blocks,...>
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const BlockchainLink = require('@trezor/blockchain-link').default;
const BlockbookWorker = require('@trezor/blockchain-link/lib/workers/blockbook').default;
const linkVersion = require('@trezor/blockchain-link/package.json').version;

const [base, list] = process.argv.slice(2);
if (!base || !list) {
    console.error('usage: node trezor-fees.mjs <base url> <blocks,...>');
    process.exit(2);
}
const blocks = list.split(',').map(Number);
const link = new BlockchainLink({
    name: 'fees', worker: BlockbookWorker, server: [base], debug: false, timeout: 20_000,
});
try {
    await link.connect();
    const fees = await link.estimateFee({ blocks });
    console.log(JSON.stringify({ version: linkVersion, fees }));
} catch (e) {
    console.log(JSON.stringify({ error: String(e?.message ?? e) }));
    process.exit(1);
} finally {
    link.dispose();
}
process.exit(0);
