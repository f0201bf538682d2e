// Drives mempool.space's websocket (/api/v1/ws) on our Esplora listener
// through the real client, @mempool/mempool.js's websocket functions
// (e2e/mempoolspace_ws_test.go runs it).
//
// usage: node mempool-ws.mjs <base url> <facts.json>  ({address, tip})
//
// The script talks with the Go test over stdin and stdout:
//   it prints "ready" once init, want and the trackings are answered; the
//   test then broadcasts a payment to the address and writes its txid;
//   the script prints "pending" once the client saw that tx pushed
//   (address-transactions, multi-address-transactions, a projected block
//   holding it, txPosition); the test mines it and the script prints
//   "done <n> checks" once the block, txConfirmed and block-transactions
//   came. A mismatch prints "FAIL <what>" and exits 1.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';

import mempoolJS from '@mempool/mempool.js';

import { fail, ok, done } from './checks.mjs';

const require = createRequire(import.meta.url);
const version = require('@mempool/mempool.js/package.json').version;

const [base, factsPath] = process.argv.slice(2);
if (!base || !factsPath) {
    console.error('usage: node mempool-ws.mjs <base url> <facts.json>');
    process.exit(2);
}
const { address, tip } = JSON.parse(readFileSync(factsPath, 'utf8'));
process.on('unhandledRejection', (e) => fail(`unhandled rejection: ${e?.stack ?? e}`));
if (version !== '3.0.0') fail(`@mempool/mempool.js version ${version}, want 3.0.0`);

const url = new URL(base);
const { bitcoin: { websocket } } = mempoolJS({ hostname: url.host, protocol: url.protocol.replace(':', ''), network: 'main' });

// Messages are kept; next() finds the first one holding every key asked
// for that passes check (one push may answer several calls).
const queue = [];
let waiter = null;
const ws = websocket.wsInit(); // sends {"action":"init"} on open
ws.on('message', (data) => {
    queue.push(JSON.parse(data.toString()));
    if (waiter) waiter();
});
ws.on('close', (code, reason) => fail(`connection closed: ${code} ${reason}`));
ws.on('error', (e) => fail(`websocket error: ${e.message}`));

async function next(what, keys, check = () => true) {
    const deadline = Date.now() + 60_000;
    for (;;) {
        const m = queue.find((m) => keys.every((k) => k in m) && check(m));
        if (m) {
            ok(what);
            return m;
        }
        if (Date.now() > deadline) fail(`${what}: no message with ${keys}; kept: ${JSON.stringify(queue).slice(0, 3000)}`);
        await new Promise((resolve) => {
            waiter = resolve;
            setTimeout(resolve, 500);
        });
        waiter = null;
    }
}

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function readLine() {
    const { value, done } = await lines.next();
    if (done) fail('stdin closed');
    if (value.startsWith('error')) fail(`the test: ${value}`);
    return value.trim();
}

const init = await next('wsInit: init data', ['blocks', 'mempool-blocks', 'mempoolInfo', 'fees', 'da']);
if (init.blocks.length !== 8 || init.blocks[7].height !== tip) fail(`init blocks: ${JSON.stringify(init.blocks.map((b) => b.height))}`);
if (typeof init.fees.fastestFee !== 'number' || typeof init.mempoolInfo.size !== 'number') fail(`init stats: ${JSON.stringify(init.fees)}`);
websocket.wsWantData(ws, ['blocks', 'mempool-blocks', 'stats']);
await next('wsWantData: blocks, mempool-blocks, stats', ['blocks', 'mempool-blocks', 'mempoolInfo', 'vBytesPerSecond', 'fees', 'da']);
websocket.wsTrackAddress(ws, address);
websocket.wsTrackAddresses(ws, [address]);
websocket.wsTrackRbfSummary(ws);
websocket.wsTrackMempoolBlock(ws, 0);
await next('wsTrackMempoolBlock: projected block 0', ['projected-block-transactions'],
    (m) => m['projected-block-transactions'].index === 0 && Array.isArray(m['projected-block-transactions'].blockTransactions));
console.log('ready');

const txid = await readLine();
websocket.wsTrackTransaction(ws, txid);
const pushed = await next('wsTrackAddress: address-transactions', ['address-transactions'],
    (m) => m['address-transactions'].some((t) => t.txid === txid && t.status.confirmed === false));
if (!('multi-address-transactions' in pushed)) {
    await next('wsTrackAddresses: multi-address-transactions', ['multi-address-transactions'],
        (m) => m['multi-address-transactions'][address]?.mempool.some((t) => t.txid === txid));
} else {
    ok('wsTrackAddresses: multi-address-transactions');
}
await next('wsTrackTransaction: txPosition', ['txPosition'], (m) => m.txPosition.txid === txid && m.txPosition.position.block === 0);
{
    // The push that projected the tx carries block 0's change too: the
    // whole list, or a delta adding it (mempool.space's two forms).
    const tx = (m) => {
        const p = m['projected-block-transactions'];
        return (p?.blockTransactions ?? p?.delta?.added ?? []).find((t) => t[0] === txid);
    };
    const got = await next('mempool-blocks and projected block 0 holding the tx', ['mempool-blocks', 'mempoolInfo', 'projected-block-transactions'],
        (m) => m['mempool-blocks'].length >= 1 && m.mempoolInfo.size >= 1 && !!tx(m));
    const [, fee, vsize, value, rate, flags, time] = tx(got);
    // rate is its package's effective rate, rounded to 2 decimals.
    // flags: mempool.space's classification; rbf or no_rbf is always set.
    if (!(fee > 0 && vsize > 0 && value > 0 && Math.abs(rate - fee / vsize) < 0.1 && (flags & 3) !== 0 && time > 0)) {
        fail(`compressed tx: ${JSON.stringify(tx(got))}`);
    }
}
console.log('pending');

await readLine();
const mined = await next('block with txConfirmed and block-transactions', ['block', 'txConfirmed', 'block-transactions']);
if (mined.block.height !== tip + 1 || mined.txConfirmed !== txid || !mined['block-transactions'].some((t) => t.txid === txid && t.status.confirmed)) {
    fail(`block message: ${JSON.stringify({ height: mined.block.height, txConfirmed: mined.txConfirmed })}`);
}
websocket.wsStopTrackingTransaction(ws);
websocket.wsStopTrackingAddress(ws);
websocket.wsStopTrackingAddresses(ws);
websocket.wsStopTrackingRbfSummary(ws);
websocket.wsStopData(ws);
ws.send(JSON.stringify({ action: 'ping' }));
await next('still served after the stop messages', ['pong']);
ws.removeAllListeners('close');
ws.close();
done();
