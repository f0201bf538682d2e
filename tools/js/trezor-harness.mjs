// Plumbing for trezor-client.mjs: loads the real @trezor/blockchain-link
// with its Blockbook worker in this process, records what it emits and
// what it sends, and talks to the Go test over stdin/stdout.
//
// Nothing here replaces library code: the two wrappers below call the
// original methods and only observe their arguments and results.
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';

const require = createRequire(import.meta.url);

export const BlockchainLink = require('@trezor/blockchain-link').default;
export const BlockbookWorker = require('@trezor/blockchain-link/lib/workers/blockbook').default;
// The worker's own websocket API class: its filter calls are what Trezor
// Suite's coinjoin backend uses (they are not on BlockchainLink itself).
export const { BlockbookAPI } = require('@trezor/blockchain-link/lib/workers/blockbook/websocket');
const { BaseWebsocket } = require('@trezor/blockchain-link/lib/workers/baseWebsocket');
export const linkVersion = require('@trezor/blockchain-link/package.json').version;

// GUARD is how long any wait may take before the script gives up. It is a
// failure guard for event-driven waits, never a speed assertion.
export const GUARD_MS = 90_000;

// ---- checks -------------------------------------------------------------

let checks = 0;

export function fail(msg) {
    process.stdout.write(`FAIL ${msg}\n`);
    process.exit(1);
}

export function ok(name, detail = '') {
    checks++;
    process.stdout.write(`ok ${name}${detail ? ' ' + detail : ''}\n`);
}

export function checkCount() {
    return checks;
}

const show = (v) => (v === undefined ? 'undefined' : JSON.stringify(v));

// eq requires got to equal want (deep, key order ignored).
export function eq(what, got, want) {
    if (stable(got) !== stable(want)) {
        fail(`${what}: got ${truncate(show(got))}, want ${truncate(show(want))}`);
    }
}

// expect requires cond; msg explains what was wrong.
export function expect(cond, msg) {
    if (!cond) fail(msg);
}

function stable(v) {
    if (v === undefined) return 'undefined';
    if (v === null || typeof v !== 'object') return JSON.stringify(v);
    if (Array.isArray(v)) return '[' + v.map(stable).join(',') + ']';
    return '{' + Object.keys(v).filter((k) => v[k] !== undefined).sort()
        .map((k) => JSON.stringify(k) + ':' + stable(v[k])).join(',') + '}';
}

function truncate(s, n = 600) {
    return s.length > n ? s.slice(0, n) + '…' : s;
}

// rejects runs p and returns the error message it fails with; it fails the
// script if p succeeds.
export async function rejects(what, p) {
    try {
        const v = await p;
        fail(`${what}: succeeded with ${truncate(show(v))}, want an error`);
    } catch (e) {
        return String(e?.message ?? e);
    }
    return '';
}

// ---- observing the library ----------------------------------------------

// sent records every request frame the library's websocket sends and the
// raw answer it got (before the library transforms it): {method, params,
// at, answer}.
export const sent = [];
const origSendMessage = BaseWebsocket.prototype.sendMessage;
BaseWebsocket.prototype.sendMessage = function (message, ...rest) {
    const rec = { method: message?.method, params: message?.params, at: Date.now(), answer: undefined };
    sent.push(rec);
    const p = origSendMessage.call(this, message, ...rest);
    p.then((a) => { rec.answer = a; }, () => {});
    return p;
};

// lastAnswer is the raw answer to the latest request of method.
export function lastAnswer(method) {
    const rec = sent.findLast((s) => s.method === method);
    if (!rec) fail(`the library sent no ${method} request`);
    return rec.answer;
}

// keepAlives records the library's keep-alive requests (BlockbookAPI.ping,
// which the websocket client calls after pingTimeout ms of silence while
// subscriptions are held) and what the server answered.
export const keepAlives = [];
const origPing = BlockbookAPI.prototype.ping;
BlockbookAPI.prototype.ping = function (...args) {
    const rec = { at: Date.now(), result: undefined, error: undefined };
    keepAlives.push(rec);
    const p = origPing.apply(this, args);
    p.then((r) => { rec.result = r; }, (e) => { rec.error = String(e?.message ?? e); });
    return p;
};

// Recorder keeps every event a BlockchainLink emits and lets the script
// wait for one matching a predicate.
export class Recorder {
    constructor(link, name) {
        this.name = name;
        this.events = [];
        this.waiters = [];
        for (const type of ['connected', 'disconnected', 'block', 'notification', 'mempool', 'fiatRates']) {
            link.on(type, (payload) => this.push(type, payload));
        }
    }

    push(type, payload) {
        const ev = { type, payload, at: Date.now() };
        this.events.push(ev);
        this.waiters = this.waiters.filter((w) => {
            if (w.type === type && w.pred(payload)) {
                w.resolve(ev);
                return false;
            }
            return true;
        });
    }

    count(type, pred = () => true) {
        return this.events.filter((e) => e.type === type && pred(e.payload)).length;
    }

    // wait returns the first event of type matching pred that arrived after
    // index `since` (an events.length taken earlier).
    wait(type, pred, what, since = 0) {
        const found = this.events.slice(since).find((e) => e.type === type && pred(e.payload));
        if (found) return Promise.resolve(found);
        return new Promise((resolve) => {
            const timer = setTimeout(() => fail(`${this.name}: no ${what} within ${GUARD_MS / 1000} s (failure guard)`), GUARD_MS);
            this.waiters.push({ type, pred, resolve: (ev) => { clearTimeout(timer); resolve(ev); } });
        });
    }
}

// until polls fn until it returns a truthy value (a failure guard for
// eventually-consistent state, not a speed assertion).
export async function until(what, fn) {
    const deadline = Date.now() + GUARD_MS;
    for (;;) {
        const v = await fn();
        if (v) return v;
        if (Date.now() > deadline) fail(`${what} not reached within ${GUARD_MS / 1000} s (failure guard)`);
        await sleep(50);
    }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- talking to the Go test ---------------------------------------------

const stdinLines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

// ask prints a request line for the Go test and returns its answer line.
export async function ask(line) {
    process.stdout.write(line + '\n');
    const timer = setTimeout(() => fail(`no answer from the Go test to "${line}" (failure guard)`), GUARD_MS);
    const { value, done } = await stdinLines.next();
    clearTimeout(timer);
    if (done) fail(`stdin closed while waiting for the answer to "${line}"`);
    if (value.startsWith('error ')) fail(`the Go test could not do "${line}": ${value.slice(6)}`);
    return value;
}

// mine asks the Go test to mine a block holding txids and returns its
// height and hash.
export async function mine(...txids) {
    const answer = await ask(`need-block ${txids.join(' ')}`);
    const [word, height, hash] = answer.split(' ');
    if (word !== 'block' || !/^\d+$/.test(height) || !/^[0-9a-f]{64}$/.test(hash)) {
        fail(`unexpected answer to need-block: "${answer}"`);
    }
    return { height: Number(height), hash };
}
