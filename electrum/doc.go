// Package electrum is the Electrum protocol front: JSON-RPC over TCP, TLS
// and websocket for the Electrum wallet and the wallets that speak its
// protocol (versions 1.4 to 1.6). It answers from the index through
// api.Service and api.ScriptQueries only, like the other fronts, and
// notifies subscribers of new tips and of script hashes whose status
// changed, from the same block and mempool events the websocket API uses.
package electrum
