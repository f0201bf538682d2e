// The wallet client and ERC-4626 vaults: @trezor/blockchain-link (Blockbook
// worker, EVM mode) passes Blockbook's protocols through its getAccountInfo
// payload and keeps the token's protocols mark; the vault's data comes from
// getContractInfo over the worker's own websocket class (the library has no
// method for it), and the holder's position computed from the two answers
// is checked against facts the Go test read from the vault itself
// (e2e/erc4626_test.go).
//
// usage: node trezor-erc4626.mjs <base url> <facts.json>
// facts: {holder, vault, asset, shares, position, slack, shareDecimals}
import { readFileSync } from 'node:fs';

import { BlockchainLink, BlockbookWorker, BlockbookAPI, lastAnswer, ok, eq, expect, checkCount } from './trezor-harness.mjs';

const [base, factsPath] = process.argv.slice(2);
if (!base || !factsPath) {
    console.error('usage: node trezor-erc4626.mjs <base url> <facts.json>');
    process.exit(2);
}
const F = JSON.parse(readFileSync(factsPath, 'utf8'));
const same = (a, b) => a.toLowerCase() === b.toLowerCase();

const link = new BlockchainLink({ name: 'regtest-eth', worker: BlockbookWorker, server: [base], debug: false, timeout: 20_000 });
eq('connect', await link.connect(), true);

const info = await link.getAccountInfo({ descriptor: F.holder, details: 'tokenBalances', protocols: ['erc4626'] });
eq('getAccountInfo is EVM', typeof lastAnswer('getAccountInfo').nonce, 'string');
const share = (info.tokens ?? []).find((t) => same(t.contract, F.vault));
const asset = (info.tokens ?? []).find((t) => same(t.contract, F.asset));
expect(share && asset, `getAccountInfo tokens ${JSON.stringify(info.tokens)} lack the vault or its asset`);
eq('vault share token protocols', share.protocols, ['erc4626']);
eq('asset token protocols', asset.protocols, undefined);
eq('vault shares', share.balance, F.shares);
ok('getAccountInfo protocols', `${share.symbol} marked erc4626, ${asset.symbol} not; ${share.balance} shares`);

const plain = await link.getAccountInfo({ descriptor: F.holder, details: 'tokenBalances' });
eq('without protocols', (plain.tokens ?? []).map((t) => t.protocols), (plain.tokens ?? []).map(() => undefined));
ok('getAccountInfo without protocols', 'no marks');

const api = new BlockbookAPI({ url: base, timeout: 20_000 });
await api.connect();
const ci = await api.send('getContractInfo', { contract: share.contract, protocols: ['erc4626'] });
const v = ci.protocols?.erc4626;
expect(v && v.share && v.asset && v.convertToAssets1Share, `getContractInfo ${JSON.stringify(ci)}`);
eq('vault asset', v.asset.contract.toLowerCase(), F.asset.toLowerCase());
eq('share decimals', v.share.decimals, F.shareDecimals);
// The position as a wallet shows it: shares × one share's assets.
const position = (BigInt(share.balance) * BigInt(v.convertToAssets1Share)) / 10n ** BigInt(v.share.decimals);
const diff = BigInt(F.position) - position;
expect(diff >= 0n && diff <= BigInt(F.slack), `position ${position} ${v.asset.symbol} base units, the vault's convertToAssets says ${F.position}`);
ok('vault position', `${share.balance} shares = ${position} ${v.asset.symbol} base units (vault: ${F.position})`);
await api.disconnect();
await link.disconnect();
process.stdout.write(`done ${checkCount()} checks\n`);
process.exit(0);
