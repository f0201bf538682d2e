package electrum

import "strings"

// cheapCalls answer from memory (the session, the tip, cached fees): they
// never wait for the process-wide gate on expensive work (Config.Gate),
// so a wallet's ping or fee estimate is not queued behind other clients'
// history reads.
var cheapCalls = map[string]bool{
	"blockchain.headers.subscribe": true, "blockchain.estimatefee": true, "blockchain.relayfee": true,
	"blockchain.scripthash.unsubscribe": true, "blockchain.outpoint.unsubscribe": true,
	"blockchain.silentpayments.unsubscribe": true,
}

// heavyCall reports a call that reads the index or the node.
func heavyCall(method string) bool {
	if strings.HasPrefix(method, "server.") || strings.HasPrefix(method, "mempool.") {
		return false
	}
	return !cheapCalls[method]
}
