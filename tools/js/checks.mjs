// The check lines the Go tests read from the real-client scripts
// (esplora-client.mjs, mempool-ws.mjs): "ok <check>" per check, "FAIL
// <what>" and exit 1 on a mismatch, "done <n> checks" at the end.
let n = 0;

export function fail(what) {
    console.log(`FAIL ${what}`);
    process.exit(1);
}

export function ok(what) {
    n++;
    console.log(`ok ${what}`);
}

export function done() {
    console.log(`done ${n} checks`);
    process.exit(0);
}
