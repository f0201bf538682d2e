// What @trezor/blockchain-link should return, computed from the facts the Go
// test derives from its own ledger (tools/chaingen), never from our server.
import { eq, expect } from './trezor-harness.mjs';

const big = (s) => BigInt(s);

// txView is what transformTransaction (in @trezor/blockchain-link-utils)
// makes of a tx seen from one address: its type and amount follow the
// library's rules over the address's own inputs and outputs.
export function txView(t) {
    const sent = big(t.sent);
    const recv = big(t.received);
    const fee = big(t.fee);
    if (t.myIns > 0) {
        if (t.myIns < t.ins) return { type: 'joint', amount: (recv - sent).toString() };
        if (t.myOuts < t.outs) return { type: 'sent', amount: (sent - recv - fee).toString() };
        return { type: 'self', amount: fee.toString() };
    }
    if (t.myOuts > 0) return { type: 'recv', amount: recv.toString() };
    return { type: 'unknown', amount: t.totalOut };
}

// feeRate is the library's fee / vsize rounded half-up to 2 decimals, as a
// decimal string without trailing zeros.
export function feeRate(fee, vsize) {
    const f = big(fee) * 100n;
    const v = BigInt(vsize);
    const hundredths = (2n * f + v) / (2n * v);
    const whole = hundredths / 100n;
    const frac = (hundredths % 100n).toString().padStart(2, '0').replace(/0+$/, '');
    return frac ? `${whole}.${frac}` : `${whole}`;
}

// checkTx compares a transformed tx with the facts of that tx as seen from
// address (omit address for getTransaction, which has no owner).
export function checkTx(what, tx, f, txid, address) {
    eq(`${what} txid`, tx.txid, txid);
    eq(`${what} blockHeight`, tx.blockHeight, f.height);
    eq(`${what} blockHash`, tx.blockHash, f.blockHash);
    eq(`${what} blockTime`, tx.blockTime, f.blockTime);
    eq(`${what} fee`, tx.fee, f.fee);
    eq(`${what} vsize`, tx.vsize, f.vsize);
    eq(`${what} feeRate`, tx.feeRate, feeRate(f.fee, f.vsize));
    eq(`${what} details.vin count`, tx.details.vin.length, f.ins);
    eq(`${what} details.vout count`, tx.details.vout.length, f.outs);
    eq(`${what} details.totalInput`, tx.details.totalInput, f.totalIn);
    eq(`${what} details.totalOutput`, tx.details.totalOutput, f.totalOut);
    if (address !== undefined) {
        const want = txView(f);
        eq(`${what} type (seen from ${address})`, tx.type, want.type);
        eq(`${what} amount (seen from ${address})`, tx.amount, want.amount);
        const owned = (list) => list.filter((x) => x.isAccountOwned).length;
        eq(`${what} own inputs`, owned(tx.details.vin), f.myIns);
        eq(`${what} own outputs`, owned(tx.details.vout), f.myOuts);
    } else {
        eq(`${what} type (no owner)`, tx.type, 'unknown');
    }
}

// accountCore is what getAccountInfo returns at every details level for a
// confirmed-only address.
export function checkAccountCore(what, info, acc) {
    eq(`${what} descriptor`, info.descriptor, acc.address);
    eq(`${what} balance`, info.balance, acc.balance);
    eq(`${what} availableBalance`, info.availableBalance, acc.balance);
    eq(`${what} empty`, info.empty, acc.txCount === 0 && acc.balance === '0');
    eq(`${what} history.total`, info.history.total, acc.txCount);
    eq(`${what} history.unconfirmed`, info.history.unconfirmed, 0);
    eq(`${what} tokens`, info.tokens, undefined);
    eq(`${what} addresses (xpub only)`, info.addresses, undefined);
    expect(info.misc === undefined, `${what}: misc ${JSON.stringify(info.misc)} is set, which only EVM answers (a string nonce) cause`);
}

// pageOf returns the ledger's slice for a page and Blockbook's paging for
// it: itemsOnPage is the page size asked for, totalPages counts every page.
export function pageOf(acc, page, size) {
    const total = Math.max(1, Math.ceil(acc.txCount / size));
    const p = Math.min(page, total);
    return {
        txids: acc.txids.slice((p - 1) * size, p * size),
        paging: { index: p, size, total },
    };
}

// utxoKey renders a transformed utxo (or a facts utxo) for set comparison.
export const utxoKey = (u) => `${u.txid}:${u.vout}`;
