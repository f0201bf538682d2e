// Type-checks every golden API response against the wallet client's own
// typings: each <kind>-<name>.golden.json becomes a typed TypeScript literal
// (`const x: Tx = {...}`) and the whole set is compiled with `tsc --strict
// --noEmit`, so a missing, extra (excess property) or mistyped field fails.
//
// usage: node check-goldens.mjs <dir with *.golden.json>
// The directory holds the REST goldens; its block-filters/ and ws/
// subdirectories hold the block-filters endpoint's and the websocket API's.
import { readdirSync, readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';

const here = dirname(fileURLToPath(import.meta.url));
const dir = process.argv[2];
if (!dir) {
    console.error('usage: node check-goldens.mjs <golden dir>');
    process.exit(2);
}

// Golden file kind (name prefix) → TypeScript type, per directory. Types not
// in the typings are defined in the prelude below with Blockbook's shapes.
const kinds = {
    '.': {
        status: 'SystemInfo',
        'block-index': 'BlockIndexRes',
        block: 'BlockWire',
        rawblock: 'BlockRaw',
        tx: 'Tx',
        'tx-specific': 'unknown',
        rawtx: 'string',
        address: 'Address',
        utxo: 'Utxo[]',
        sendtx: 'ResultRes',
        estimatefee: 'ResultRes',
        feestats: 'FeeStats',
        balancehistory: 'BalanceHistory[]',
        error: 'ErrorRes',
    },
    'block-filters': {
        error: 'ErrorRes',
        '': 'BlockFiltersRes',
    },
    ws: {
        getInfo: 'WsInfoRes',
        getBlockHash: 'WsBlockHashRes',
        getBlock: 'BlockWire',
        getAccountInfo: 'Address',
        getAccountUtxo: 'Utxo[]',
        getTransaction: 'Tx',
        getBalanceHistory: 'BalanceHistory[]',
        estimateFee: 'WsEstimateFeeRes[]',
        longTermFeeRate: "import('@trezor/blockchain-link-types/lib/blockbook-api').WsLongTermFeeRateRes",
        sendTransaction: 'Push',
        getMempoolFilters: 'FilterResponse & MempoolTxidFilterEntries',
        getBlockFilter: 'FilterResponse & { blockFilter: string }',
        getBlockFiltersBatch: 'FilterResponse & { blockFiltersBatch: `${string}:${string}:${string}`[] }',
        getFiatRatesForTimestamps: 'FiatTickers',
        subscribe: 'SubscribeRes',
        unsubscribe: 'SubscribeRes',
        ping: 'Record<string, never>',
        'notification-block': 'BlockNotificationWire',
        'notification-address': 'WsAddressNotification',
        'notification-tx': 'Tx',
        error: 'WsErrorRes',
    },
    // Fiat rates (REST and, prefixed ws-, websocket) of an instance with
    // fiat_rates configured.
    fiat: {
        status: 'SystemInfo',
        tickers: "import('@trezor/blockchain-link-types/lib/blockbook-api').FiatTicker",
        'multi-tickers': "import('@trezor/blockchain-link-types/lib/blockbook-api').FiatTicker[]",
        'tickers-list': "import('@trezor/blockchain-link-types/lib/blockbook-api').AvailableVsCurrencies",
        balancehistory: 'BalanceHistory[]',
        address: 'Address',
        error: 'ErrorRes',
        'ws-getCurrentFiatRates': "import('@trezor/blockchain-link-types/lib/blockbook-api').FiatTicker",
        'ws-getFiatRatesForTimestamps': 'FiatTickers',
        'ws-getFiatRatesTickersList': "import('@trezor/blockchain-link-types/lib/blockbook-api').AvailableVsCurrencies",
        'ws-getBalanceHistory': 'BalanceHistory[]',
        'ws-getAccountInfo': 'Address',
        'ws-notification-fiatRates': "import('@trezor/blockchain-link-types/lib/blockbook').FiatRatesNotification",
        'ws-error': 'WsErrorRes',
    },
    // Accounts (xpubs and descriptors): REST, and the websocket in xpub/ws.
    xpub: {
        xpub: 'Address',
        utxo: 'Utxo[]',
        balancehistory: 'BalanceHistory[]',
        error: 'ErrorRes',
    },
    // Ethereum-type answers (samples of a dev chain run).
    eth: {
        status: 'SystemInfo',
        'block-index': 'BlockIndexRes',
        block: 'EthBlockWire',
        tx: 'EthTxWire',
        'tx-specific': 'EthTxSpecific',
        rawtx: 'string',
        address: 'EthAddressWire',
        contract: 'ContractInfoWire',
        estimatefee: 'ResultRes',
        sendtx: 'ResultRes',
        error: 'ErrorRes',
        'ws-getInfo': 'WsInfoRes',
        'ws-sendTransaction': 'Push',
        'ws-getAccountInfo': 'EthAddressWire',
        'ws-getContractInfo': 'ContractInfoWire',
        'ws-estimateFee': 'WsEstimateFeeRes[]',
        'ws-getTransaction': 'EthTxWire',
        'ws-notification-block': 'BlockNotificationWire',
    },
    // Tron answers (the java-tron double's generated chain): Blockbook's
    // Tron shapes, declared below from its blockbook-api.ts.
    tron: {
        status: 'SystemInfo',
        block: 'TronBlockWire',
        tx: 'TronTxWire',
        address: 'TronAddressWire',
        error: 'ErrorRes',
        'ws-getInfo': 'WsInfoRes',
        'ws-getAccountInfo': 'TronAddressWire',
        'ws-getTransaction': 'TronTxWire',
        'ws-getBlock': 'TronBlockWire',
    },
    'xpub/ws': {
        getAccountInfo: 'Address',
        getAccountUtxo: 'Utxo[]',
        getBalanceHistory: 'BalanceHistory[]',
        error: 'WsErrorRes',
    },
    // REST v1 and the unversioned paths of a Bitcoin-type chain: v1 shapes
    // (declared below; the typings have none) and, where Blockbook's v1 is
    // v2, the typings' types.
    v1: {
        'v1-block-index': 'BlockIndexRes',
        'v1-block': 'BlockV1',
        'v1-tx-specific': 'unknown',
        'v1-tx': 'TxV1',
        'v1-address': 'AddressV1',
        'v1-utxo': 'UtxoV1[]',
        'v1-sendtx': 'ResultRes',
        'v1-estimatefee': 'ResultRes',
        'v1-error': 'ErrorRes',
        'unversioned-block-index': 'BlockIndexRes',
        'unversioned-block': 'BlockV1',
        'unversioned-tx-specific': 'unknown',
        'unversioned-tx': 'TxV1',
        'unversioned-address': 'AddressV1',
        'unversioned-xpub': 'AddressV1',
        'unversioned-utxo': 'UtxoV1[]',
        'unversioned-estimatefee': 'ResultRes',
        'unversioned-rawtx': 'string',
        'unversioned-rawblock': 'BlockRaw',
        'unversioned-balancehistory': 'BalanceHistory[]',
        'unversioned-error': 'ErrorRes',
    },
    // mempool.space's /api/v1 routes on the Esplora listener: mempool.js's
    // own typings, with the fields its typings leave out taken from
    // mempool.space's backend interfaces (mempool.interfaces.ts).
    mempoolspace: {
        'fees-mempool-blocks': 'FeesMempoolBlocks[]',
        'fees-recommended': 'RecommendedFeesWire',
        'fees-precise': 'RecommendedFeesWire',
    },
    // mempool.space's RBF, validate-address and error answers: typed from
    // its backend's interfaces (mempool.js 3.0.0 has no typings for them).
    'mempoolspace-txs': {
        'tx-rbf': 'RbfHistoryWire',
        'replacements': 'RbfTreeWire[]',
        'validate-address': 'AddressInformationWire',
        'error': 'ErrorRes',
    },
    // mempool.space's newer websocket messages (mempool.js 3.0.0 types no
    // message): mempool's backend and frontend interfaces.
    'mempoolspace-ws': {
        'tracked-txs': 'Record<string, TxTrackingInfo>',
        'multi-scriptpubkey-transactions': 'Record<string, AddressTxsWire>',
        'mempool-transactions': 'MempoolDeltaWire',
        'mempool-txids': 'MempoolDeltaTxids',
        'projected-block-transactions': 'ProjectedBlockTxsWire',
        'live-2h-chart': 'OptimizedStatisticWire',
    },
    // mempool.space's prices and historical-price: its PricesRepository's
    // ApiPrice and Conversion.
    'mempoolspace-prices': {
        prices: 'ApiPrice',
        'historical-price': 'ConversionWire',
        error: 'ErrorRes',
    },
};

const prelude = `import type { SystemInfo, Block, BlockRaw, Tx, Address, Utxo, FeeStats, WsInfoRes, WsBlockHashRes,
    BalanceHistory, WsEstimateFeeRes, FiatTickers, MempoolTxidFilterEntries } from '@trezor/blockchain-link-types/lib/blockbook-api';
import type { Push, FilterResponse, BlockNotification, Subscribe } from '@trezor/blockchain-link-types/lib/blockbook';

import type { FeesMempoolBlocks, FeesRecommended } from '@mempool/mempool.js/lib/interfaces/bitcoin/fees';
// mempool.js types fees/recommended without economyFee, which the backend's
// RecommendedFees has.
type RecommendedFeesWire = FeesRecommended & { economyFee: number };

// mempool.space's backend interfaces for answers mempool.js does not type:
// RbfTransaction, RbfTree (rbf-cache.ts), the tx/:txid/rbf answer
// (bitcoin.routes.ts getRbfHistory) and Bitcoin Core's validateaddress as
// AddressInformation (bitcoin-api.interface.ts; an invalid address
// carries only isvalid and Core's error fields).
interface RbfTransactionWire {
    txid: string; fee: number; vsize: number; value: number; acc?: boolean; rate?: number; time?: number;
    rbf?: boolean; mined?: boolean; fullRbf?: boolean;
}
interface RbfTreeWire { tx: RbfTransactionWire; time: number; interval?: number; mined?: boolean; fullRbf: boolean; replaces: RbfTreeWire[] }
interface RbfHistoryWire { replacements: RbfTreeWire | null; replaces: string[] | null }
type AddressInformationWire = {
    isvalid: true; address: string; scriptPubKey: string; isscript: boolean; iswitness: boolean;
    witness_version?: number; witness_program?: string;
} | { isvalid: false; error?: string; error_locations?: number[] };

// mempool's backend interfaces for the newer websocket messages
// (mempool.interfaces.ts, api/bitcoin/esplora-api.interface.ts) and its
// frontend's compressed txs (websocket.interface.ts). Esplora's tx: the
// witness, the inner scripts' asm and an output's address are optional,
// as electrs leaves them out when empty.
interface EsploraVoutWire { scriptpubkey: string; scriptpubkey_asm: string; scriptpubkey_type: string; scriptpubkey_address?: string; value: number }
interface EsploraVinWire {
    txid: string; vout: number; is_coinbase: boolean; scriptsig: string; scriptsig_asm: string; inner_redeemscript_asm?: string;
    inner_witnessscript_asm?: string; sequence: number; witness?: string[]; prevout: EsploraVoutWire | null;
}
interface EsploraTxWire {
    txid: string; version: number; locktime: number; size: number; weight: number; fee: number; vin: EsploraVinWire[];
    vout: EsploraVoutWire[]; status: { confirmed: boolean; block_height?: number; block_hash?: string; block_time?: number }; hex?: string;
}
interface Ancestor { txid: string; weight: number; fee: number }
// MempoolDelta, whose added and replaced.by are the backend's
// MempoolTransactionExtended and TransactionExtended; ours are Esplora's
// txs without the extended fields (a deviation docs/api.md states), so
// they are typed as such here.
interface MempoolDeltaWire {
    sequence: number; added: EsploraTxWire[]; removed: string[]; mined: string[];
    replaced: { replaced: string; by: EsploraTxWire }[];
}
interface MempoolDeltaTxids { sequence: number; added: string[]; removed: string[]; mined: string[]; replaced: { replaced: string; by: string }[] }
interface TxTrackingInfo {
    replacedBy?: string;
    position?: { block: number; vsize: number; accelerated?: boolean; acceleratedBy?: number[]; acceleratedAt?: number; feeDelta?: number };
    cpfp?: {
        ancestors?: Ancestor[]; bestDescendant?: Ancestor | null; descendants?: Ancestor[] | null; effectiveFeePerVsize?: number | null;
        sigops: number; adjustedVsize: number;
    };
    utxoSpent?: { [vout: number]: { vin: number; txid: string } };
    accelerated?: boolean; acceleratedBy?: number[]; acceleratedAt?: number; feeDelta?: number; confirmed?: boolean;
}
// track-scriptpubkeys' answer per script (websocket-handler.ts; the
// frontend reads its txs as electrs' Transaction).
interface AddressTxsWire { mempool: EsploraTxWire[]; confirmed: EsploraTxWire[]; removed: EsploraTxWire[] }
// [txid, fee, vsize, value, rate, flags, time, acceleration?]
type TransactionCompressed = [string, number, number, number, number, number, number, 1?];
// [txid, rate, flags, acceleration]
type MempoolDeltaChange = [string, number, number, 1 | 0];
interface MempoolBlockDelta { added: TransactionCompressed[]; removed: string[]; changed: MempoolDeltaChange[] }
type ProjectedBlockTxsWire = { index: number; sequence: number } & ({ blockTransactions: TransactionCompressed[] } | { delta: MempoolBlockDelta });
// OptimizedStatistic types added as a string, but the backend reads it
// with UNIX_TIMESTAMP(added): a number on the wire, as we send it.
interface OptimizedStatisticWire {
    added: number; count: number; vbytes_per_second: number; total_fee: number; mempool_byte_weight: number; min_fee: number; vsizes: number[];
}
// PricesRepository.ts.
interface ApiPrice {
    time?: number; USD: number; EUR: number; GBP: number; CAD: number; CHF: number; AUD: number; JPY: number; BGN: number; BRL: number;
    CNY: number; CZK: number; DKK: number; HKD: number; HRK: number; HUF: number; IDR: number; ILS: number; INR: number; ISK: number;
    KRW: number; MXN: number; MYR: number; NOK: number; NZD: number; PHP: number; PLN: number; RON: number; RUB: number; SEK: number;
    SGD: number; THB: number; TRY: number; ZAR: number;
}
interface ExchangeRates {
    USDEUR: number; USDGBP: number; USDCAD: number; USDCHF: number; USDAUD: number; USDJPY: number; USDBGN?: number; USDBRL?: number;
    USDCNY?: number; USDCZK?: number; USDDKK?: number; USDHKD?: number; USDHRK?: number; USDHUF?: number; USDIDR?: number; USDILS?: number;
    USDINR?: number; USDISK?: number; USDKRW?: number; USDMXN?: number; USDMYR?: number; USDNOK?: number; USDNZD?: number; USDPHP?: number;
    USDPLN?: number; USDRON?: number; USDRUB?: number; USDSEK?: number; USDSGD?: number; USDTHB?: number; USDTRY?: number; USDZAR?: number;
}
// Conversion; with a currency asked, each price holds only time, USD and
// that currency (the backend casts those to ApiPrice).
interface ConversionWire { prices: (ApiPrice | (Pick<ApiPrice, 'USD'> & Partial<ApiPrice> & { time: number }))[]; exchangeRates: ExchangeRates }

// Answers the typings do not describe, in Blockbook's shapes.
interface BlockIndexRes { blockHash: string }
interface ResultRes { result: string }
interface ErrorRes { error: string }
interface WsErrorRes { error: { message: string } }
type SubscribeRes = Subscribe & { message?: string };
// The wire form of an address notification (the typings describe it after
// the client transformed the tx).
interface WsAddressNotification { address: string; tx: Tx }
interface BlockFiltersRes {
    P: number;
    M: number;
    zeroedKey: boolean;
    blockFilters: { [height: string]: { blockHash: string; filter: string } };
}
// Deliberate deviation (docs/api.md): Blockbook sends a block's version as a
// JSON number (Go's common.JSONNumber); the typings, generated from the Go
// type, say string. We follow the wire.
type BlockWire = Omit<Block, 'version'> & { version: number };
// Blockbook's v1 (Insight-like) shapes, field for field as its api/typesv1.go
// puts them on the wire: amounts in coins as decimal strings.
interface VinV1 {
    txid: string; vout: number; sequence?: number; n: number;
    scriptSig: { hex?: string; asm?: string }; addresses: string[] | null; value: string;
}
interface VoutV1 {
    value: string; n: number; scriptPubKey: { hex?: string; asm?: string; addresses: string[] | null; type?: string };
    spent: boolean; spentTxId?: string; spentIndex?: number; spentHeight?: number;
}
interface TxV1 {
    txid: string; version?: number; locktime?: number; vin: VinV1[]; vout: VoutV1[]; blockhash?: string;
    blockheight: number; confirmations: number; time?: number; blocktime: number; valueOut: string; size?: number;
    valueIn: string; fees: string; hex: string;
}
interface PagingV1 { page?: number; totalPages?: number; itemsOnPage?: number }
interface AddressV1 extends PagingV1 {
    addrStr: string; balance: string; totalReceived: string; totalSent: string; unconfirmedBalance: string;
    unconfirmedTxApperances: number; txApperances: number; txs?: TxV1[]; transactions?: string[];
}
interface UtxoV1 { txid: string; vout: number; amount: string; satoshis: number; height?: number; confirmations: number }
type BlockV1 = Omit<BlockWire, 'txs' | 'txCount'> & { txCount: number; txs?: TxV1[] };
// Fields Blockbook 0.6.0 sends that these (older) typings lack, in its
// shapes: a contract creation's vout has addresses null; addresses carry
// confirmedNonce on request; contract info carries the index's
// blockHeight; new-block notifications carry evmData (null on
// Bitcoin-type and pre-London blocks).
type EthVoutWire = Omit<import('@trezor/blockchain-link-types/lib/blockbook-api').Vout, 'addresses'> & { addresses: string[] | null };
type EthTxWire = Omit<Tx, 'vout'> & { vout: EthVoutWire[] };
type EthBlockWire = Omit<BlockWire, 'txs'> & { txs?: EthTxWire[] };
// ERC-4626 vaults (protocols=erc4626), which these typings lack: Blockbook's
// blockbook-api.ts Erc4626TokenMetadata, Erc4626Token and
// ContractInfoProtocols, ContractInfoResult.protocols and Token.protocols.
interface Erc4626TokenMetadata { contract: string; name?: string; symbol?: string; decimals: number }
interface Erc4626Token {
    asset?: Erc4626TokenMetadata; share?: Erc4626TokenMetadata; totalAssets?: string;
    convertToAssets1Share?: string; convertToShares1Asset?: string; previewDeposit1Asset?: string;
    previewRedeem1Share?: string; error?: string;
}
interface ContractInfoProtocols { erc4626?: Erc4626Token }
// A token's rates on getContractInfo: blockbook-api.ts ContractInfoRates
// and ContractInfoResult.rates.
interface ContractInfoRates { baseRate?: number; currency?: string; secondaryRate?: number }
type ContractInfoWire = import('@trezor/blockchain-link-types/lib/blockbook-api').ContractInfo & {
    blockHeight: number;
    rates?: ContractInfoRates;
    protocols?: ContractInfoProtocols;
};
type EthTokenWire = import('@trezor/blockchain-link-types/lib/blockbook-api').Token & { protocols?: string[] };
type EthAddressWire = Omit<Address, 'contractInfo' | 'erc20Contract' | 'transactions' | 'tokens'> & {
    confirmedNonce?: string;
    contractInfo?: ContractInfoWire;
    erc20Contract?: ContractInfoWire;
    transactions?: EthTxWire[];
    tokens?: EthTokenWire[];
};
type BlockNotificationWire = BlockNotification & {
    evmData: { baseFeePerGas?: string; blockGasUsed?: string; blockGasLimit?: string } | null;
};
// Tron (Blockbook's blockbook-api.ts, newer than these typings): the
// chainExtraData payloads and the TRC token standards. The tx payload is
// what Blockbook's code emits (TronChainExtraData), which adds
// claimedVoteReward and feeLimit to the .ts declaration; the payload type
// is fixed to 'tron' so that the payload is checked, not taken as any.
interface TronVoteExtra { address?: string; count?: string }
interface TronChainExtraData {
    contractType?: string; operation?: string; note?: string; resource?: string; stakeAmount?: string;
    unstakeAmount?: string; delegateAmount?: string; delegateTo?: string; assetIssueID?: string; totalFee?: string;
    energyUsage?: string; energyUsageTotal?: string; energyFee?: string; bandwidthUsage?: string; bandwidthFee?: string;
    result?: string; votes?: TronVoteExtra[];
}
type TronChainExtraDataEmitted = TronChainExtraData & { claimedVoteReward?: string; feeLimit?: string };
interface TronVote { address: string; voteCount: string }
interface TronUnstakingBatch { amount: string; expireTime: number }
interface TronStakingInfo {
    stakedBalance: string; stakedBalanceEnergy: string; stakedBalanceBandwidth: string;
    unstakingBatches: TronUnstakingBatch[]; totalVotingPower: string; availableVotingPower: string; votes: TronVote[];
    unclaimedReward: string; delegatedBalanceEnergy: string; delegatedBalanceBandwidth: string; latestWithdrawTime: number;
}
interface TronAccountExtraData {
    availableStakedBandwidth: number; totalStakedBandwidth: number; availableFreeBandwidth: number; totalFreeBandwidth: number;
    availableEnergy: number; totalEnergy: number; totalEnergyLimit: number; totalEnergyWeight: number;
    totalBandwidthLimit: number; totalBandwidthWeight: number; stakingInfo?: TronStakingInfo;
}
type TronStandard = '' | 'TRC20' | 'TRC721' | 'TRC1155';
type TronTokenTransferWire = Omit<import('@trezor/blockchain-link-types/lib/blockbook-api').TokenTransfer, 'type' | 'standard'> & { type: TronStandard; standard: TronStandard };
type TronTxWire = Omit<EthTxWire, 'tokenTransfers'> & {
    tokenTransfers?: TronTokenTransferWire[];
    chainExtraData?: { payloadType: 'tron'; payload?: TronChainExtraDataEmitted };
};
type TronTokenWire = Omit<EthTokenWire, 'type' | 'standard'> & { type: TronStandard; standard: TronStandard };
type TronContractInfoWire = Omit<ContractInfoWire, 'type' | 'standard'> & { type: TronStandard; standard: TronStandard };
type TronAddressWire = Omit<EthAddressWire, 'transactions' | 'tokens' | 'contractInfo' | 'erc20Contract'> & {
    transactions?: TronTxWire[]; tokens?: TronTokenWire[]; contractInfo?: TronContractInfoWire; erc20Contract?: TronContractInfoWire;
    chainExtraData?: { payloadType: 'tron'; payload?: TronAccountExtraData };
};
type TronBlockWire = Omit<BlockWire, 'txs'> & { txs?: TronTxWire[] };
// Blockbook's tx-specific of an Ethereum tx: the node's tx and receipt,
// cut to these fields (hex quantities as the node sends them).
interface EthTxSpecific {
    tx: {
        nonce: string; gasPrice: string; maxPriorityFeePerGas?: string; maxFeePerGas?: string; baseFeePerGas?: string;
        gas: string; to: string; value: string; input: string; hash: string; blockNumber: string; blockHash?: string;
        from: string; transactionIndex: string;
    };
    receipt?: {
        gasUsed: string; status: string; logs: { address: string; topics: string[]; data: string }[];
        l1Fee?: string; l1FeeScalar?: string; l1GasPrice?: string; l1GasUsed?: string; contractAddress?: string;
    };
}
`;

let out = prelude;
let count = 0;
const problems = [];
for (const [sub, types] of Object.entries(kinds)) {
    const d = join(dir, sub);
    if (!existsSync(d)) {
        problems.push(`missing golden directory ${d}`);
        continue;
    }
    const files = readdirSync(d).filter((f) => f.endsWith('.golden.json')).sort();
    if (files.length === 0) {
        problems.push(`no golden files in ${d}`);
    }
    const prefixes = Object.keys(types).sort((a, b) => b.length - a.length);
    for (const f of files) {
        const kind = prefixes.find((k) => k === '' || f.startsWith(k + '-') || f === k + '.golden.json');
        if (kind === undefined) {
            problems.push(`${join(sub, f)}: no known kind prefix`);
            continue;
        }
        const json = readFileSync(join(d, f), 'utf8');
        JSON.parse(json); // must be valid JSON in any case
        out += `\n// ${join(sub, f)}\nexport const g${count++}: ${types[kind]} = ${json.trim()};\n`;
    }
}
if (problems.length) {
    console.error(problems.join('\n'));
    process.exit(1);
}
const gen = join(here, 'generated');
mkdirSync(gen, { recursive: true });
writeFileSync(join(gen, 'goldens.ts'), out);
try {
    execFileSync(join(here, 'node_modules', '.bin', 'tsc'), ['-p', join(here, 'tsconfig.json')], { stdio: 'inherit' });
} catch {
    console.error('golden responses do not match the typings (see errors above)');
    process.exit(1);
}
console.log(`${count} golden responses type-check against @trezor/blockchain-link-types`);
