package mesh

// The Mesh wire objects this front answers and reads, with the
// specification's names (tools/meshcheck/testdata/api.json). Optional
// fields are omitted when empty, so that an answer holds nothing the
// specification does not define.

// NetworkIdentifier names the chain served.
type NetworkIdentifier struct {
	Blockchain string `json:"blockchain"`
	Network    string `json:"network"`
	// SubNetworkIdentifier is read to refuse it: we serve none.
	SubNetworkIdentifier *struct {
		Network  string         `json:"network"`
		Metadata map[string]any `json:"metadata,omitempty"`
	} `json:"sub_network_identifier,omitempty"`
}

// BlockIdentifier is a block of the active chain.
type BlockIdentifier struct {
	Index int64  `json:"index"`
	Hash  string `json:"hash"`
}

// PartialBlockIdentifier names a block by index, hash, both or neither
// (the tip).
type PartialBlockIdentifier struct {
	Index *int64  `json:"index,omitempty"`
	Hash  *string `json:"hash,omitempty"`
}

// TransactionIdentifier is a txid.
type TransactionIdentifier struct {
	Hash string `json:"hash"`
}

// AccountIdentifier is an address, or one of our pseudo-accounts
// (account.go).
type AccountIdentifier struct {
	Address    string                `json:"address"`
	SubAccount *SubAccountIdentifier `json:"sub_account,omitempty"`
	Metadata   map[string]any        `json:"metadata,omitempty"`
}

// SubAccountIdentifier is read to refuse it: UTXO chains have none.
type SubAccountIdentifier struct {
	Address  string         `json:"address"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Currency is the chain's coin.
type Currency struct {
	Symbol   string         `json:"symbol"`
	Decimals int            `json:"decimals"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Amount is a signed value in the coin's smallest unit, as a decimal
// string.
type Amount struct {
	Value    string         `json:"value"`
	Currency *Currency      `json:"currency"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// OperationIdentifier places an operation in its tx.
type OperationIdentifier struct {
	Index        int64  `json:"index"`
	NetworkIndex *int64 `json:"network_index,omitempty"`
}

// CoinIdentifier is an outpoint, "txid:vout".
type CoinIdentifier struct {
	Identifier string `json:"identifier"`
}

// CoinChange is what an operation does to a coin.
type CoinChange struct {
	CoinIdentifier CoinIdentifier `json:"coin_identifier"`
	CoinAction     string         `json:"coin_action"`
}

// Operation is one balance change of one account.
type Operation struct {
	OperationIdentifier OperationIdentifier   `json:"operation_identifier"`
	RelatedOperations   []OperationIdentifier `json:"related_operations,omitempty"`
	Type                string                `json:"type"`
	Status              string                `json:"status,omitempty"`
	Account             *AccountIdentifier    `json:"account,omitempty"`
	Amount              *Amount               `json:"amount,omitempty"`
	CoinChange          *CoinChange           `json:"coin_change,omitempty"`
	Metadata            map[string]any        `json:"metadata,omitempty"`
}

// Transaction is a tx's operations.
type Transaction struct {
	TransactionIdentifier TransactionIdentifier `json:"transaction_identifier"`
	Operations            []Operation           `json:"operations"`
	Metadata              map[string]any        `json:"metadata,omitempty"`
}

// Block is a block with every tx's operations.
type Block struct {
	BlockIdentifier       BlockIdentifier `json:"block_identifier"`
	ParentBlockIdentifier BlockIdentifier `json:"parent_block_identifier"`
	Timestamp             int64           `json:"timestamp"` // milliseconds
	Transactions          []Transaction   `json:"transactions"`
}

// Coin is an unspent output.
type Coin struct {
	CoinIdentifier CoinIdentifier `json:"coin_identifier"`
	Amount         Amount         `json:"amount"`
}

// PublicKey is a key in hex with its curve.
type PublicKey struct {
	HexBytes  string `json:"hex_bytes"`
	CurveType string `json:"curve_type"`
}

// SigningPayload is what one key signs.
type SigningPayload struct {
	Address           string             `json:"address,omitempty"`
	AccountIdentifier *AccountIdentifier `json:"account_identifier,omitempty"`
	HexBytes          string             `json:"hex_bytes"`
	SignatureType     string             `json:"signature_type,omitempty"`
}

// Signature is a signature of a payload by a key.
type Signature struct {
	SigningPayload SigningPayload `json:"signing_payload"`
	PublicKey      PublicKey      `json:"public_key"`
	SignatureType  string         `json:"signature_type"`
	HexBytes       string         `json:"hex_bytes"`
}

// Error is the Mesh error object.
type Error struct {
	Code      int32          `json:"code"`
	Message   string         `json:"message"`
	Retriable bool           `json:"retriable"`
	Details   map[string]any `json:"details,omitempty"`
}

// Requests.

type networkRequest struct {
	netRequest
	Metadata map[string]any `json:"metadata,omitempty"`
}

type blockRequest struct {
	netRequest
	BlockIdentifier *PartialBlockIdentifier `json:"block_identifier"`
}

type blockTransactionRequest struct {
	netRequest
	BlockIdentifier       *BlockIdentifier       `json:"block_identifier"`
	TransactionIdentifier *TransactionIdentifier `json:"transaction_identifier"`
}

type mempoolTransactionRequest struct {
	netRequest
	TransactionIdentifier *TransactionIdentifier `json:"transaction_identifier"`
}

type accountBalanceRequest struct {
	netRequest
	AccountIdentifier *AccountIdentifier      `json:"account_identifier"`
	BlockIdentifier   *PartialBlockIdentifier `json:"block_identifier,omitempty"`
	Currencies        []Currency              `json:"currencies,omitempty"`
}

type accountCoinsRequest struct {
	netRequest
	AccountIdentifier *AccountIdentifier `json:"account_identifier"`
	IncludeMempool    *bool              `json:"include_mempool"`
	Currencies        []Currency         `json:"currencies,omitempty"`
}
