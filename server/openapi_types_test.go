package server

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/openexplorer/blockbook/api"
)

// The spec's schemas against the Go wire types they describe: the same
// JSON fields, a field required exactly when it has no omitempty, and a
// JSON type that fits the Go type. Answers validate these only as far as
// the goldens reach; this covers every field.

func TestOpenAPISchemasMatchGoTypes(t *testing.T) {
	c := loadSpec(t)
	types := map[string]any{
		"Error": errorBody{}, "Result": api.Result{}, "SystemInfo": api.SystemInfo{}, "BlockbookInfo": api.BlockbookInfo{},
		"BackendInfo": api.BackendInfo{}, "BlockIndex": api.BlockIndex{}, "RawBlock": api.BlockRaw{}, "Block": api.Block{},
		"Vin": api.Vin{}, "Vout": api.Vout{}, "Tx": api.Tx{}, "EthereumSpecific": api.EthereumSpecific{},
		"EthereumParsedInputData": api.EthereumParsedInputData{}, "EthereumParsedInputParam": api.EthereumParsedInputParam{},
		"InternalTransfer": api.EthereumInternalTransfer{}, "MultiTokenValue": api.MultiTokenValue{},
		"TokenTransfer": api.TokenTransfer{}, "Token": api.Token{}, "ContractInfo": api.ContractInfo{}, "Erc4626Token": api.Erc4626Token{}, "Erc4626TokenMetadata": api.Erc4626TokenMetadata{}, "Address": api.Address{},
		"Utxo": api.Utxo{}, "BalanceHistory": api.BalanceHistory{}, "FeeStats": api.FeeStats{}, "BlockFilters": api.BlockFilters{},
		"BlockFilter": api.BlockFilterEntry{}, "FiatTicker": api.FiatTicker{}, "AvailableCurrencies": api.AvailableVsCurrencies{},
		"ReplicaInfo": api.ReplicaInfo{}, "SyncProgress": api.SyncProgress{}, "StakingPool": api.StakingPool{}, "ChainExtraData": api.ChainExtraData{},
		"PushdataSearch": api.PushdataSearch{}, "PushdataMatch": api.PushdataMatch{},
		"Rune": api.RuneInfo{}, "RuneTerms": api.RuneTerms{}, "RuneBalance": api.RuneBalance{}, "RuneHistory": api.RuneHistory{},
		"TweakPage": api.TweakPage{}, "TweakPageTx": api.TweakPageTx{}, "TweakPageOutput": api.TweakPageOutput{},
	}
	for name, s := range c.Doc.Components.Schemas {
		if _, ok := types[name]; !ok && len(s.Value.Properties) > 0 && name != "TxSpecific" {
			t.Errorf("schema %s has no Go type in this test", name)
		}
	}
	for name, v := range types {
		s, err := c.Schema(name)
		if err != nil {
			t.Error(err)
			continue
		}
		fields := map[string]reflect.Type{}
		var required []string
		jsonFields(reflect.TypeOf(v), fields, &required)
		for f, typ := range fields {
			p := s.Properties[f]
			if p == nil {
				t.Errorf("%s: field %q is not in the spec", name, f)
				continue
			}
			if want := jsonType(typ); want != "" && !p.Value.Type.Is(want) {
				t.Errorf("%s.%s: spec type %v, Go type %s is a JSON %s", name, f, p.Value.Type.Slice(), typ, want)
			}
		}
		for f := range s.Properties {
			if _, ok := fields[f]; !ok {
				t.Errorf("%s: spec property %q is no field of %T", name, f, v)
			}
		}
		slices.Sort(required)
		specRequired := slices.Sorted(slices.Values(s.Required))
		if !slices.Equal(required, specRequired) {
			t.Errorf("%s: spec requires %v, the Go type always sends %v", name, specRequired, required)
		}
	}
}

// jsonFields collects the JSON fields of a struct type (embedded structs
// flattened, as encoding/json does) and those without omitempty.
func jsonFields(typ reflect.Type, fields map[string]reflect.Type, required *[]string) {
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			jsonFields(f.Type, fields, required)
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
		if !strings.Contains(opts, "omitempty") {
			*required = append(*required, name)
		}
	}
}

var (
	amountType     = reflect.TypeFor[api.Amount]()
	timeType       = reflect.TypeFor[time.Time]()
	jsonNumberType = reflect.TypeFor[json.Number]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
)

// jsonType is the JSON type a Go type encodes to ("" for any).
func jsonType(typ reflect.Type) string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch typ {
	case amountType, timeType:
		return openapi3.TypeString
	case jsonNumberType:
		return openapi3.TypeInteger // block versions are integers
	case rawMessageType:
		return "" // passed through as the node sent it
	}
	switch typ.Kind() {
	case reflect.String:
		return openapi3.TypeString
	case reflect.Bool:
		return openapi3.TypeBoolean
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return openapi3.TypeInteger
	case reflect.Float32, reflect.Float64:
		return openapi3.TypeNumber
	case reflect.Slice, reflect.Array:
		return openapi3.TypeArray
	case reflect.Map, reflect.Struct:
		return openapi3.TypeObject
	}
	return ""
}
