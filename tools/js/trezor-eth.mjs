// Drives our websocket API on an Ethereum-type chain through the real wallet
// client, @trezor/blockchain-link (Blockbook worker, EVM mode: it switches on
// a string "nonce" in getAccountInfo), and checks every answer against facts
// the Go test computed from the ethgen ledger (e2e_trezor_eth_test.go).
//
// usage: node trezor-eth.mjs <base url> <facts.json>
//
// Protocol with the Go test: "ok <check>" per check, "FAIL …" and exit 1 on a
// mismatch, "done <n> checks" at the end. "need-payment" asks the Go test to
// send its prepared payment (answer "tx <hash>"); "need-block <txid>..." asks
// it to seal a block holding those txs (answer "block <height> <hash> <json>"
// with each tx's receipt facts).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

import {
    BlockchainLink, BlockbookWorker, BlockbookAPI, linkVersion, Recorder, lastAnswer,
    ok, eq, expect, fail, rejects, until, ask, checkCount,
} from './trezor-harness.mjs';

const require = createRequire(import.meta.url);
// The worker's own transform, to read what a newBlockTxs notification (which
// the library never asks for) would become.
const { transformTransaction } = require('@trezor/blockchain-link-utils/lib/blockbook');

const [base, factsPath] = process.argv.slice(2);
if (!base || !factsPath) {
    console.error('usage: node trezor-eth.mjs <base url> <facts.json>');
    process.exit(2);
}
const F = JSON.parse(readFileSync(factsPath, 'utf8'));
process.on('unhandledRejection', (e) => fail(`unhandled rejection: ${e?.stack ?? e}`));

eq('@trezor/blockchain-link version', linkVersion, '2.6.2');
ok('library', `@trezor/blockchain-link ${linkVersion}, EVM mode`);

// ---- what the library makes of a tx (rules of transformTransaction) ------

const isZero = (v) => v === undefined || v === '' || v === '0';

// wireOut is the single output Blockbook gives an EVM tx: the recipient
// and the value (a contract creation has no recipient: addresses null).
const wireOut = (x) => ({ n: 0, value: x.value, addresses: x.to ? [x.to] : null, isAddress: x.to !== '' });

// expectTx is transformTransaction's result for fact tx x seen from
// descriptor d (undefined: getTransaction, no owner).
function expectTx(x, d) {
    const mine = (a) => d !== undefined && a === d;
    const dir = (from, to) => (mine(from) && mine(to) ? 'self' : mine(from) ? 'sent' : 'recv');
    const tokens = d === undefined ? [] : x.tokenTransfers.filter((t) => mine(t.from) || mine(t.to)).map((t) => ({
        type: dir(t.from, t.to), standard: t.standard, from: t.from, to: t.to, contract: t.contract,
        name: t.name || undefined, symbol: t.symbol || undefined, decimals: t.decimals,
        // ERC1155 transfers carry no value: the library leaves amount ''.
        amount: t.value ?? '', multiTokenValues: t.multi,
    }));
    const internal = d === undefined ? [] : x.internal.filter((i) => i.type === 0 && (mine(i.from) || mine(i.to)))
        .map((i) => ({ type: dir(i.from, i.to), amount: i.value, from: i.from, to: i.to }));
    const out = wireOut(x);
    const myIn = mine(x.from);
    const myOut = x.to !== '' && mine(x.to);
    const target = { n: 0, addresses: out.addresses, isAddress: out.isAddress, amount: x.value, isAccountTarget: myOut || undefined };
    let type; let amount; let targets;
    if (x.createdContract) {
        [type, amount, targets] = ['contract', x.value, []];
    } else if (myIn) {
        if (!myOut) {
            type = 'sent';
            amount = x.value;
            targets = tokens.length && isZero(x.value) ? [] : [target];
        } else {
            [type, amount, targets] = ['self', x.fee, [target]];
        }
    } else if (myOut || tokens.length || internal.length) {
        type = 'recv';
        amount = myOut ? x.value : '0';
        targets = myOut ? [target] : [];
        const transfers = [...tokens, ...internal];
        if (transfers.some((t) => t.type === 'sent')) type = 'sent';
        else if (!myOut && transfers.some((t) => t.type !== 'recv')) type = 'self';
    } else {
        [type, amount, targets] = ['unknown', x.value, []];
    }
    if (!x.pending && x.status === 0) type = 'failed';
    return {
        type, txid: x.txid, blockHeight: x.height, blockHash: x.blockHash, amount, fee: x.fee, tokens,
        internalTransfers: internal, targets,
        vin: [{ n: 0, addresses: [x.from], isAddress: true, isAccountOwned: myIn || undefined }],
        vout: [{ ...out, isAccountOwned: myOut || undefined }],
        totalInput: '0', totalOutput: x.value,
    };
}

// expectSpecific is the ethereumSpecific the library passes on.
function expectSpecific(x) {
    return {
        type: x.type || undefined, // internal data's kind: 1 for a creation, omitted for calls, as Blockbook
        createdContract: x.createdContract, status: x.status, nonce: x.nonce, gasLimit: x.gasLimit,
        gasUsed: x.pending ? undefined : x.gasUsed, gasPrice: x.gasPrice,
        maxFeePerGas: x.maxFeePerGas, maxPriorityFeePerGas: x.maxPriorityFeePerGas, baseFeePerGas: x.baseFeePerGas,
        data: x.data, parsedData: x.parsedData, internalTransfers: x.internal.length ? x.internal : undefined,
    };
}

const pick = (o, keys) => Object.fromEntries(keys.map((k) => [k, o?.[k]]));
const vinVout = ['n', 'value', 'addresses', 'isAddress', 'isAccountOwned'];

// checkTx compares a transformed tx with the expectation; blockTime is
// checked by the caller for pending txs (first seen by the server).
function checkTx(what, tx, x, d) {
    const want = expectTx(x, d);
    eq(`${what}`, {
        type: tx.type, txid: tx.txid, blockHeight: tx.blockHeight, blockHash: tx.blockHash, amount: tx.amount, fee: tx.fee,
        tokens: tx.tokens, internalTransfers: tx.internalTransfers, targets: tx.targets,
        vin: tx.details.vin.map((v) => pick(v, vinVout)), vout: tx.details.vout.map((v) => pick(v, vinVout)),
        totalInput: tx.details.totalInput, totalOutput: tx.details.totalOutput,
    }, want);
    eq(`${what} ethereumSpecific`, { ...tx.ethereumSpecific, error: undefined }, expectSpecific(x));
    // A reverted tx says why (the trace's error); a successful one does not.
    expect((x.status === 0) === (typeof tx.ethereumSpecific.error === 'string' && tx.ethereumSpecific.error !== ''),
        `${what}: status ${x.status} with error ${JSON.stringify(tx.ethereumSpecific.error)}`);
    eq(`${what} feeRate/vsize/size (none for EVM)`, [tx.feeRate, tx.vsize, tx.details.size], [undefined, undefined, 0]);
    if (!x.pending) eq(`${what} blockTime`, tx.blockTime, x.blockTime);
    return want;
}

// ---- connect and getInfo ------------------------------------------------

const startedAt = Math.floor(Date.now() / 1000);
const settings = (name) => ({
    name, worker: BlockbookWorker, server: [base], debug: false, timeout: 20_000, pingTimeout: F.pingTimeoutMs,
});
const link = new BlockchainLink(settings('regtest-eth'));
const A = new Recorder(link, 'client A');

eq('connect', await link.connect(), true);
await A.wait('connected', () => true, 'connected event');
ok('connect', base);

{
    const info = await link.getInfo();
    const I = F.info;
    eq('getInfo', pick(info, ['url', 'name', 'shortcut', 'network', 'testnet', 'decimals', 'blockHeight', 'blockHash', 'consensusBranchId']), {
        url: base, name: I.name, shortcut: I.shortcut, network: I.network, testnet: I.testnet, decimals: I.decimals,
        blockHeight: I.tipHeight, blockHash: I.tipHash, consensusBranchId: undefined,
    });
    // What the server sends that makes a Trezor client treat the chain as
    // EVM: 18 decimals and the shortcut in getInfo, the string nonce in
    // getAccountInfo (checked below).
    expect(typeof info.version === 'string' && info.version !== '', `getInfo version ${JSON.stringify(info.version)}`);
    ok('getInfo', `name=${info.name} shortcut=${info.shortcut} network=${info.network} testnet=${info.testnet} decimals=${info.decimals} best=${info.blockHeight} ${info.blockHash}`);
}
eq('subscribe block', await link.subscribe({ type: 'block' }), { subscribed: true });
ok('subscribe block');

for (const [height, hash] of Object.entries(F.blockHashes)) {
    eq(`getBlockHash ${height}`, await link.getBlockHash(Number(height)), hash);
}
ok('getBlockHash', `scenario blocks ${Object.keys(F.blockHashes).join(', ')}`);

// ---- accounts -----------------------------------------------------------

// tokenInfo is what transformTokenInfo keeps of the ledger's holding.
function tokenInfo(t, balances) {
    return {
        type: t.standard, standard: t.standard, name: t.name, contract: t.contract, transfers: t.transfers,
        symbol: t.symbol || undefined, decimals: t.decimals,
        balance: balances && t.standard === 'ERC20' ? t.balance : undefined,
        ids: balances ? t.ids : undefined,
        multiTokenValues: balances ? t.multi : undefined,
    };
}
const byContract = (a, b) => (a.contract < b.contract ? -1 : a.contract > b.contract ? 1 : 0);

function checkAccount(what, info, acc, details) {
    eq(`${what} core`, {
        descriptor: info.descriptor, balance: info.balance, availableBalance: info.availableBalance, empty: info.empty,
        addresses: info.addresses, addrTxCount: info.history.addrTxCount, total: info.history.total,
        tokens: info.history.tokens, unconfirmed: info.history.unconfirmed,
    }, {
        // EVM: the available balance is the confirmed one (pending value
        // is not added, unlike Bitcoin).
        descriptor: acc.address, balance: acc.balance, availableBalance: acc.balance,
        empty: acc.txCount === 0 && acc.unconfirmed === 0 && acc.balance === '0',
        addresses: undefined, addrTxCount: undefined, total: acc.txCount,
        // Blockbook omits nonTokenTxs when 0, and the library then leaves
        // the token tx count out.
        tokens: acc.nonTokenTxs ? acc.txCount - acc.nonTokenTxs : undefined, unconfirmed: acc.unconfirmed,
    });
    const ci = acc.contractInfo && {
        type: acc.contractInfo.standard, standard: acc.contractInfo.standard, contract: acc.contractInfo.contract,
        name: acc.contractInfo.name, symbol: acc.contractInfo.symbol, decimals: acc.contractInfo.decimals,
        createdInBlock: acc.contractInfo.createdInBlock, destructedInBlock: acc.contractInfo.destructedInBlock,
        // Blockbook's freshness mark: the index's best height when answered.
        blockHeight: F.info.tipHeight,
    };
    eq(`${what} misc (EVM: the string nonce)`, info.misc, { nonce: acc.nonce, contractInfo: ci, stakingPools: undefined, addressAliases: undefined });
    // With balances, Blockbook lists only tokens with holdings.
    const listed = acc.tokens.filter((t) => details === 'tokens' || t.standard === 'ERC20' || t.ids?.length || t.multi?.length);
    const wantTokens = details === 'basic' || listed.length === 0 ? undefined
        : listed.map((t) => tokenInfo(t, details !== 'tokens')).sort(byContract);
    eq(`${what} tokens`, info.tokens ? [...info.tokens].sort(byContract) : undefined, wantTokens);
}

let txChecks = 0;
for (const acc of F.accounts) {
    const who = `${acc.name} ${acc.address}`;
    for (const details of ['basic', 'tokens', 'tokenBalances']) {
        const info = await link.getAccountInfo({ descriptor: acc.address, details });
        checkAccount(`getAccountInfo ${details} ${who}`, info, acc, details);
        eq(`getAccountInfo ${details} ${who} page/transactions`, [info.page, info.history.transactions], [undefined, undefined]);
    }
    ok('getAccountInfo basic/tokens/tokenBalances', `${who}: balance ${acc.balance}, nonce ${acc.nonce}, ${acc.txCount} txs (+${acc.unconfirmed} pending), ${acc.tokens.length} tokens${acc.contractInfo ? `, contract ${acc.contractInfo.standard || 'without standard'}` : ''}`);

    // Every page of txs, as Suite pages an account's history. Pending txs
    // come first on page 1, on top of the page size.
    const size = 4;
    const total = Math.max(1, Math.ceil(acc.txCount / size));
    // With no txs there is one (empty) page, as Blockbook counts.
    const paging = (page) => ({ index: page, size, total });
    const seen = [];
    for (let page = 1; page <= total; page++) {
        const np = page === 1 ? acc.pending.length : 0; // pending txs, in any order
        const want = [...(page === 1 ? acc.pending : []), ...acc.txids.slice((page - 1) * size, page * size)];
        const ids = await link.getAccountInfo({ descriptor: acc.address, details: 'txids', page, pageSize: size });
        checkAccount(`getAccountInfo txids ${who} page ${page}`, ids, acc, 'tokenBalances');
        eq(`getAccountInfo txids ${who} page ${page}`, ids.page, paging(page));
        // The library drops the txids list; check it on the wire.
        const wire = lastAnswer('getAccountInfo').txids ?? [];
        eq(`getAccountInfo txids ${who} page ${page} txids on the wire (pending first, then newest first)`,
            [...wire.slice(0, np).sort(), ...wire.slice(np)], want);

        const txs = await link.getAccountInfo({ descriptor: acc.address, details: 'txs', page, pageSize: size });
        checkAccount(`getAccountInfo txs ${who} page ${page}`, txs, acc, 'tokenBalances');
        eq(`getAccountInfo txs ${who} page ${page} paging`, txs.page, paging(page));
        const got = txs.history.transactions ?? [];
        eq(`getAccountInfo txs ${who} page ${page} txids`, [...got.slice(0, np).map((t) => t.txid).sort(),
            ...got.slice(np).map((t) => t.txid)], want);
        for (const tx of got) {
            const x = F.txs[tx.txid];
            const w = checkTx(`getAccountInfo txs ${who} tx ${tx.txid}`, tx, x, acc.address);
            if (x.pending) {
                expect(tx.blockTime >= startedAt - 600 && tx.blockTime <= Date.now() / 1000 + 1,
                    `getAccountInfo txs ${who} pending tx ${tx.txid}: blockTime ${tx.blockTime}, want the time the server first saw it`);
            }
            seen.push(`${w.type} ${w.amount}${w.tokens.length ? ` +${w.tokens.length} token` : ''}${w.internalTransfers.length ? ` +${w.internalTransfers.length} internal` : ''}`);
            txChecks++;
        }
    }
    ok('getAccountInfo txids/txs', `${who}: ${total} page(s) of ${size} = ledger order; ${seen.join(', ') || 'no txs'}`);
}
ok('transformed txs', `${txChecks} account txs matched the ledger (type, amount, fee, tokens, internal transfers, targets, ethereumSpecific)`);

{
    // A contract filter: only the txs involving one token.
    const acc = F.accounts.find((a) => a.tokens.some((t) => t.standard === 'ERC20') && a.txCount > a.tokens.length + 1);
    const tk = acc.tokens.find((t) => t.standard === 'ERC20');
    const info = await link.getAccountInfo({ descriptor: acc.address, details: 'txs', contractFilter: tk.contract, pageSize: 100 });
    eq(`getAccountInfo ${acc.address} contractFilter tokens`, (info.tokens ?? []).map((t) => t.contract), [tk.contract]);
    const got = (info.history.transactions ?? []).map((t) => t.txid);
    for (const id of got) {
        const x = F.txs[id];
        expect(x.to === tk.contract || x.tokenTransfers.some((t) => t.contract === tk.contract),
            `getAccountInfo ${acc.address} contractFilter ${tk.contract}: tx ${id} does not involve it`);
    }
    const want = acc.txids.filter((id) => F.txs[id].tokenTransfers.some((t) => t.contract === tk.contract && (t.from === acc.address || t.to === acc.address)));
    expect(want.every((id) => got.includes(id)), `getAccountInfo ${acc.address} contractFilter ${tk.contract}: ${JSON.stringify(got)} misses some of ${JSON.stringify(want)}`);
    ok('getAccountInfo contractFilter', `${acc.name}: ${got.length} txs involve ${tk.symbol}`);
}

{
    for (const bad of F.malformed) {
        const msg = await rejects(`getAccountInfo of malformed ${bad}`, link.getAccountInfo({ descriptor: bad, details: 'basic' }));
        expect(/Invalid address/i.test(msg), `getAccountInfo ${bad}: error ${JSON.stringify(msg)}`);
    }
    const msg = await rejects('subscribe a malformed address', link.subscribe({ type: 'addresses', addresses: [F.malformed[0]] }));
    expect(/Invalid address/i.test(msg), `subscribe ${F.malformed[0]}: error ${JSON.stringify(msg)}`);
    // The library keeps the refused address in its state and re-sends it
    // with every later subscription: start clean.
    eq('unsubscribe after the refused address', await link.unsubscribe({ type: 'addresses' }), { subscribed: false });
    ok('malformed addresses rejected', `${F.malformed.join(', ')} (getAccountInfo, subscribe): ${JSON.stringify(msg)}`);
}

// ---- transactions -------------------------------------------------------

for (const [kind, id] of Object.entries(F.getTx).sort()) {
    const x = F.txs[id];
    const tx = await link.getTransaction(id);
    const w = checkTx(`getTransaction ${kind} ${id}`, tx, x);
    // Without an owner the library keeps no token transfers; they are on
    // the wire.
    const wire = lastAnswer('getTransaction');
    eq(`getTransaction ${kind} ${id} tokenTransfers on the wire`, (wire.tokenTransfers ?? []).map((t) => ({
        standard: t.standard, contract: t.contract, from: t.from, to: t.to, name: t.name || undefined,
        symbol: t.symbol || undefined, decimals: t.decimals, value: t.value, multi: t.multiTokenValues,
    })), x.tokenTransfers.map((t) => ({ ...t, name: t.name || undefined, symbol: t.symbol || undefined })));
    if (x.pending) {
        expect(tx.blockTime >= startedAt - 600 && tx.blockTime <= Date.now() / 1000 + 1, `getTransaction pending ${id}: blockTime ${tx.blockTime}, want the time the server first saw it`);
    }
    ok(`getTransaction ${kind}`, `${id}: ${w.type} ${w.amount}, fee ${w.fee}, ${x.tokenTransfers.length} token transfers, ${x.internal.length} internal`);
}
{
    const msg = await rejects('getTransaction of an unknown txid', link.getTransaction(`0x${'ab'.repeat(32)}`));
    expect(/not found/i.test(msg), `getTransaction unknown: ${msg}`);
    const msg2 = await rejects('getTransaction of a malformed txid', link.getTransaction('0x1234'));
    ok('getTransaction unknown/malformed txid rejected', `${JSON.stringify(msg)}, ${JSON.stringify(msg2)}`);
    const msg3 = await rejects('getTransactionHex (EVM answers carry no hex)', link.getTransactionHex(F.getTx.erc20));
    expect(/Missing hex/.test(msg3), `getTransactionHex: ${msg3}`);
    ok('getTransactionHex', `the library refuses: ${JSON.stringify(msg3)} (Blockbook sends no hex for EVM txs)`);
}

// ---- fees ---------------------------------------------------------------

{
    const tiers = ['low', 'medium', 'high', 'instant'];
    // Without eip1559Fees (the shipped Polygon and Optimism configs) the
    // fee per unit is the node's gas price and no tiers are sent.
    const medium = F.fees.eip1559 ? F.fees.tiers[1] : [F.fees.gasPrice];
    const eip1559 = F.fees.eip1559 ? {
        baseFeePerGas: F.fees.baseFeePerGas,
        ...Object.fromEntries(F.fees.tiers.map(([maxFee, tip], i) => [tiers[i], { maxFeePerGas: maxFee, maxPriorityFeePerGas: tip }])),
    } : undefined;
    const perTx = (BigInt(medium[0]) * 21000n).toString();
    const blocks = [1, 2, 6, 25];
    const fees = await link.estimateFee({ blocks });
    eq('estimateFee (plain transfer)', fees, blocks.map(() => ({ feePerUnit: medium[0], feePerTx: perTx, feeLimit: '21000', eip1559 })));
    // As Suite asks for an EVM send: from, to, value and empty data.
    const acc = F.accounts.find((a) => a.name === 'alice');
    const plain = await link.estimateFee({ blocks: [1], specific: { from: acc.address, to: F.payment.payee, value: '1', data: '0x' } });
    eq('estimateFee (transfer with specific)', plain, [{ feePerUnit: medium[0], feePerTx: perTx, feeLimit: '21000', eip1559 }]);
    ok('estimateFee', F.fees.eip1559
        ? `gas price ${medium[0]} wei (medium tier), limit 21000, eip1559 tiers ${F.fees.tiers.map((t) => t[1]).join('/')} tip over base ${F.fees.baseFeePerGas}`
        : `gas price ${medium[0]} wei (the node's), limit 21000, no eip1559 tiers`);
    // A contract call: the limit is the node's eth_estimateGas.
    const call = await link.estimateFee({ blocks: [1], specific: { from: F.push.from, to: F.push.to, value: '0', data: F.push.data } });
    const callPerTx = (BigInt(medium[0]) * BigInt(F.push.estimatedGas)).toString();
    eq('estimateFee (contract call)', call, [{ feePerUnit: medium[0], feePerTx: callPerTx, feeLimit: F.push.estimatedGas, eip1559 }]);
    ok('estimateFee contract call', `feeLimit ${F.push.estimatedGas} (the node's gas estimate)`);
}

// ---- balance history, contract calls, what EVM has not ------------------

{
    const acc = F.accounts.find((a) => a.name === 'alice');
    // alice started empty: over her whole history, received − sent (fees
    // included) is her balance, and every mined tx is counted.
    const hist = await link.getAccountBalanceHistory({ descriptor: acc.address, groupBy: 3600 });
    const net = hist.reduce((s, b) => s + BigInt(b.received) - BigInt(b.sent), 0n);
    eq('getAccountBalanceHistory (received − sent = balance)', net.toString(), acc.balance);
    eq('getAccountBalanceHistory txs', hist.reduce((s, b) => s + b.txs, 0), acc.txCount);
    ok('getAccountBalanceHistory', `${hist.length} buckets, ${acc.txCount} txs, net ${net}`);
    // rpcCall: the pushed token's balanceOf(alice), as the ledger has it.
    const token = acc.tokens.find((t) => t.contract.toLowerCase() === F.push.to.toLowerCase());
    const data = '0x70a08231' + acc.address.slice(2).toLowerCase().padStart(64, '0');
    const call = await link.rpcCall({ from: acc.address, to: F.push.to, data });
    eq('rpcCall balanceOf', BigInt(call.data).toString(), token?.balance ?? '0');
    ok('rpcCall', `balanceOf(${acc.address}) on ${F.push.to} = ${BigInt(call.data)}`);
    const m3 = await rejects('getAccountUtxo (no UTXOs)', link.getAccountUtxo(acc.address));
    ok('not served for EVM', `getAccountUtxo: ${JSON.stringify(m3)}`);
}

// ---- subscriptions, payment, push, mining -------------------------------

const P = F.payment;
const Q = F.push;
eq('subscribe accounts', await link.subscribe({ type: 'accounts', accounts: [{ descriptor: P.payee }] }), { subscribed: true });
eq('subscribe addresses', await link.subscribe({ type: 'addresses', addresses: [Q.payee, Q.from] }), { subscribed: true });
ok('subscribe', `account ${P.payee}, addresses ${Q.payee} (token payee) and ${Q.from} (token sender)`);

// A second connection (the worker's own API class) asks for confirmations
// too (newBlockTxs), which the library itself never does.
const api = new BlockbookAPI({ url: base, timeout: 20_000 });
await api.connect();
const confirmations = [];
api.addSubscription('notification', (r) => confirmations.push(r));
eq('subscribeAddresses with newBlockTxs', await api.send('subscribeAddresses', { addresses: [P.payee], newBlockTxs: true }), { subscribed: true });

// pendingFacts is the fact tx of a live tx before it is mined.
const liveFacts = (L, token) => ({
    txid: L.txid, type: 0, from: L.from, to: L.to, value: L.value, nonce: L.nonce, pending: true, height: -1, status: -1,
    // The library shows maxFeePerGas × gasLimit as a pending tx's fee (the
    // wire's fees are 0 until mined, as Blockbook's).
    gasLimit: L.gasLimit, fee: (BigInt(L.maxFeePerGas) * BigInt(L.gasLimit)).toString(), gasPrice: L.maxFeePerGas,
    maxFeePerGas: L.maxFeePerGas, maxPriorityFeePerGas: L.maxPriorityFeePerGas, data: L.data,
    tokenTransfers: token ? [token] : [], internal: [],
});

const paidAt = Date.now();
const answer = await ask('need-payment');
eq('need-payment answer', answer, `tx ${P.txid}`);
{
    const ev = await A.wait('notification', (p) => p.descriptor === P.payee && p.tx.txid === P.txid, `pending notification for ${P.payee}`);
    const x = liveFacts(P);
    const tx = ev.payload.tx;
    checkTx(`notification ${P.payee} (pending)`, tx, x, P.payee);
    expect(tx.blockTime * 1000 >= paidAt - 2000 && tx.blockTime * 1000 <= Date.now() + 1000, `pending notification blockTime ${tx.blockTime}: want when it was first seen`);
    ok('notification (pending payment)', `${P.payee}: recv ${tx.amount}, blockHeight ${tx.blockHeight}, ${ev.at - paidAt} ms after the Go test sent it`);

    const info = await until(`getAccountInfo ${P.payee} shows the pending tx`, async () => {
        const i = await link.getAccountInfo({ descriptor: P.payee, details: 'txs' });
        return i.history.unconfirmed === 1 ? i : null;
    });
    eq(`getAccountInfo ${P.payee} pending`, {
        balance: info.balance, availableBalance: info.availableBalance, empty: info.empty, total: info.history.total,
        nonce: info.misc?.nonce, txs: info.history.transactions.map((t) => [t.txid, t.type, t.amount, t.blockHeight]),
    }, { balance: '0', availableBalance: '0', empty: false, total: 0, nonce: '0', txs: [[P.txid, 'recv', P.value, -1]] });
    ok('pending payment in getAccountInfo', `${P.payee}: balance 0, available 0 (EVM), unconfirmed 1`);
}

{
    const pushedAt = Date.now();
    eq('pushTransaction', await link.pushTransaction({ hex: Q.hex }), Q.txid);
    ok('pushTransaction', `${Q.txid} (ERC20 transfer signed by the Go test)`);
    for (const d of [Q.payee, Q.from]) {
        const ev = await A.wait('notification', (p) => p.descriptor === d && p.tx.txid === Q.txid, `pending notification for ${d}`);
        const x = liveFacts(Q, Q.token);
        const w = checkTx(`notification ${d} (pushed token transfer)`, ev.payload.tx, x, d);
        ok('notification (pushed tx)', `${d}: ${w.type} ${w.amount}, token ${w.tokens.map((t) => `${t.type} ${t.amount} ${t.symbol}`).join(', ')}, ${ev.at - pushedAt} ms after the push`);
    }
    const msg = await rejects('pushTransaction of the same tx again', link.pushTransaction({ hex: Q.hex }));
    expect(/known/i.test(msg), `second push: ${msg}`);
    ok('pushTransaction again rejected', JSON.stringify(msg));
    const msg2 = await rejects('pushTransaction of garbage', link.pushTransaction({ hex: '0x02f8' }));
    ok('pushTransaction of garbage rejected', JSON.stringify(msg2));
}

const reply = await ask(`need-block ${P.txid} ${Q.txid}`);
const m = /^block (\d+) (0x[0-9a-f]{64}) (\{.*\})$/.exec(reply);
if (!m) fail(`unexpected answer to need-block: "${reply}"`);
const mined = { height: Number(m[1]), hash: m[2], txs: JSON.parse(m[3]) };
{
    const ev = await A.wait('block', (p) => p.blockHeight === mined.height, `block notification for ${mined.height}`);
    eq('block notification', ev.payload, { blockHeight: mined.height, blockHash: mined.hash });
    ok('block notification', `${mined.height} ${mined.hash}`);
    const info = await link.getInfo();
    eq('getInfo after the block', [info.blockHeight, info.blockHash], [mined.height, mined.hash]);

    const minedFacts = (L, token) => {
        const r = mined.txs[L.txid];
        return {
            ...liveFacts(L, token), parsedData: L.parsedData, pending: false, height: mined.height, blockHash: mined.hash, blockTime: r.blockTime,
            status: r.status, gasUsed: r.gasUsed, gasPrice: r.gasPrice, fee: r.fee, baseFeePerGas: r.baseFeePerGas,
        };
    };
    // The confirmation the newBlockTxs subscriber gets, as the library's
    // transform reads it.
    const conf = await until(`confirmation of ${P.txid}`, () => confirmations.find((c) => c.tx?.txid === P.txid && c.tx.blockHeight > 0));
    eq('confirmation address', conf.address, P.payee);
    const cx = minedFacts(P);
    checkTx(`confirmation ${P.payee} (mined)`, transformTransaction(conf.tx, conf.address), cx, P.payee);
    ok('notification (mined, newBlockTxs)', `${P.payee}: block ${mined.height}, fee ${cx.fee}`);

    const acc = await until(`getAccountInfo ${P.payee} confirmed`, async () => {
        const i = await link.getAccountInfo({ descriptor: P.payee, details: 'txs' });
        return i.history.unconfirmed === 0 ? i : null;
    });
    eq(`getAccountInfo ${P.payee} confirmed`, {
        balance: acc.balance, availableBalance: acc.availableBalance, total: acc.history.total, nonce: acc.misc.nonce,
        txs: acc.history.transactions.map((t) => [t.txid, t.type, t.amount, t.blockHeight, t.blockHash, t.fee]),
    }, { balance: P.value, availableBalance: P.value, total: 1, nonce: '0', txs: [[P.txid, 'recv', P.value, mined.height, mined.hash, cx.fee]] });
    ok('after mining', `${P.payee}: balance ${acc.balance}, tx in block ${mined.height}`);

    const tok = await link.getAccountInfo({ descriptor: Q.payee, details: 'txs' });
    const qx = minedFacts(Q, Q.token);
    eq(`getAccountInfo ${Q.payee} confirmed`, {
        balance: tok.balance, total: tok.history.total, unconfirmed: tok.history.unconfirmed, tokenHistory: tok.history.tokens,
        tokens: tok.tokens?.map((t) => [t.contract, t.standard, t.balance, t.transfers]),
    }, { balance: '0', total: 1, unconfirmed: 0, tokenHistory: undefined, tokens: [[Q.token.contract, 'ERC20', Q.token.value, 1]] });
    checkTx(`getAccountInfo ${Q.payee} mined token tx`, tok.history.transactions[0], qx, Q.payee);
    const gt = await link.getTransaction(Q.txid);
    checkTx(`getTransaction ${Q.txid} mined`, gt, qx);
    ok('after mining (token payee)', `${Q.payee}: ${Q.token.value} ${Q.token.symbol}, tx ${Q.txid} mined with fee ${qx.fee}`);
}

// The library asked for no confirmations: each tx was notified once per
// subscribed address, while pending.
eq(`notifications of ${P.txid}`, A.count('notification', (p) => p.tx.txid === P.txid), 1);
eq(`notifications of ${Q.txid}`, A.count('notification', (p) => p.tx.txid === Q.txid), 2);
ok('no confirmation notifications without newBlockTxs', 'one pending notification per subscribed address');

await api.disconnect();
eq('unsubscribe addresses and accounts', await link.unsubscribe({ type: 'addresses' }), { subscribed: false });
eq('unsubscribe block', await link.unsubscribe({ type: 'block' }), { subscribed: false });
eq('disconnect', await link.disconnect(), true);
link.dispose();
ok('disconnect');
process.stdout.write(`done ${checkCount()} checks\n`);
process.exit(0);
