// HD accounts through the real wallet client: getAccountInfo (tokens,
// tokenBalances, txs), getAccountUtxo and getAccountBalanceHistory by xpub
// and by output descriptor, checked against facts the Go test computed
// from its account ledger (e2e_trezor_xpub_test.go).
import { ok, eq, expect } from './trezor-harness.mjs';
import { checkTx, utxoKey } from './trezor-expect.mjs';

// addressesView is what the library makes of the tokens (its
// transformAddresses): balances only with details=tokenBalances and up.
function addressesView(A, withBalances) {
    const view = (list) => list.map((a) => ({
        address: a.address, path: a.path, transfers: a.transfers,
        balance: withBalances && a.transfers > 0 ? a.balance : undefined,
        received: withBalances && a.transfers > 0 ? a.received : undefined,
        sent: withBalances && a.transfers > 0 ? a.sent : undefined,
    }));
    return { change: view(A.addresses.change), used: view(A.addresses.used), unused: view(A.addresses.unused) };
}

export async function checkXpubAccounts(link, F) {
    for (const A of F.xpubAccounts) {
        const who = `${A.kind} ${A.descriptor.slice(0, 24)}…`;
        const core = (what, info) => {
            eq(`${what} ${who} descriptor`, info.descriptor, A.descriptor);
            eq(`${what} ${who} balances`, [info.balance, info.availableBalance, info.empty], [A.balance, A.balance, false]);
            eq(`${what} ${who} history`, [info.history.total, info.history.addrTxCount, info.history.unconfirmed], [A.txCount, A.addrTxCount, 0]);
            expect(info.misc === undefined, `${what} ${who}: misc set (EVM mode)`);
        };

        // What Suite's account discovery asks: every derived address.
        const tokens = await link.getAccountInfo({ descriptor: A.descriptor, details: 'tokens' });
        core('getAccountInfo tokens', tokens);
        eq(`getAccountInfo tokens ${who} addresses`, tokens.addresses, addressesView(A, false));
        eq(`getAccountInfo tokens ${who} tokens (none but addresses)`, tokens.tokens, undefined);
        ok('getAccountInfo details=tokens (account)', `${who}: ${A.addresses.used.length} used, ${A.addresses.unused.length} unused, ${A.addresses.change.length} change addresses with paths`);

        const used = await link.getAccountInfo({ descriptor: A.descriptor, details: 'tokenBalances', tokens: 'used' });
        core('getAccountInfo tokenBalances', used);
        const usedView = addressesView(A, true);
        usedView.change = usedView.change.filter((a) => a.transfers > 0);
        usedView.unused = [];
        eq(`getAccountInfo tokenBalances tokens=used ${who} addresses`, { ...used.addresses, unused: used.addresses?.unused ?? [] }, usedView);
        ok('getAccountInfo details=tokenBalances tokens=used (account)', `${who}: balances per used address`);

        const size = 5;
        const txs = await link.getAccountInfo({ descriptor: A.descriptor, details: 'txs', pageSize: size });
        core('getAccountInfo txs', txs);
        eq(`getAccountInfo txs ${who} page`, txs.page, { index: 1, size, total: Math.ceil(A.txCount / size) });
        eq(`getAccountInfo txs ${who} txids (each tx once, newest first)`, txs.history.transactions.map((t) => t.txid), A.txids.slice(0, size));
        for (const tx of txs.history.transactions) {
            checkTx(`getAccountInfo txs ${who} tx ${tx.txid}`, tx, A.txs[tx.txid], tx.txid, A.descriptor);
        }
        const page2 = await link.getAccountInfo({ descriptor: A.descriptor, details: 'txs', pageSize: size, page: 2 });
        eq(`getAccountInfo txs ${who} page 2 txids`, page2.history.transactions.map((t) => t.txid), A.txids.slice(size, 2 * size));
        ok('getAccountInfo details=txs (account)', `${who}: ${A.txCount} txs, ${txs.history.transactions.map((t) => `${t.type} ${t.amount}`).join(', ')}`);

        const utxos = await link.getAccountUtxo(A.descriptor);
        eq(`getAccountUtxo ${who} set`, utxos.map(utxoKey).sort(), A.utxos.map(utxoKey).sort());
        const byKey = new Map(A.utxos.map((u) => [utxoKey(u), u]));
        for (const u of utxos) {
            const w = byKey.get(utxoKey(u));
            eq(`getAccountUtxo ${who} ${utxoKey(u)}`, {
                amount: u.amount, blockHeight: u.blockHeight, confirmations: u.confirmations, address: u.address, path: u.path,
            }, { amount: w.value, blockHeight: w.height, confirmations: F.info.tipHeight - w.height + 1, address: w.address, path: w.path });
        }
        ok('getAccountUtxo (account)', `${who}: ${utxos.length} utxos with address and path`);

        const hist = await link.getAccountBalanceHistory({ descriptor: A.descriptor, groupBy: 3600 });
        const sum = (k) => hist.reduce((s, b) => s + BigInt(b[k]), 0n).toString();
        eq(`getAccountBalanceHistory ${who} sums (txs, received, sent, sentToSelf)`,
            [hist.reduce((s, b) => s + b.txs, 0), sum('received'), sum('sent'), sum('sentToSelf')],
            [A.history.txs, A.history.received, A.history.sent, A.history.sentToSelf]);
        ok('getAccountBalanceHistory (account)', `${who}: ${hist.length} buckets, sentToSelf ${sum('sentToSelf')}`);
    }
}
