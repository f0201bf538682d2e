package chaingen

import (
	"fmt"
	"maps"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/chaincfg/v2"
)

// decodeAddress parses addr and checks it belongs to params' network.
func decodeAddress(addr string, params *chaincfg.Params) (address.Address, error) {
	a, err := address.DecodeAddress(addr, params)
	if err != nil {
		return nil, fmt.Errorf("chaingen: address %q: %w", addr, err)
	}
	if !a.IsForNet(params) {
		return nil, fmt.Errorf("chaingen: address %q is not for %s", addr, params.Name)
	}
	return a, nil
}

// registry maps wallet scripts both ways. Entries are immutable; Fork copies
// the maps and shares the entries.
type registry struct {
	params *chaincfg.Params
	seed   string
	byRef  map[scriptRef]*scriptInfo
	byPk   map[string]*scriptInfo
	keys   map[keyID]*keyPair // kinds at one index share a key derivation
}

type keyID struct {
	ns    byte
	index uint64
}

func newRegistry(params *chaincfg.Params, seed string) *registry {
	return &registry{params: params, seed: seed, byRef: make(map[scriptRef]*scriptInfo),
		byPk: make(map[string]*scriptInfo), keys: make(map[keyID]*keyPair)}
}

func (r *registry) key(ns byte, index uint64) *keyPair {
	id := keyID{ns, index}
	k, ok := r.keys[id]
	if !ok {
		k = deriveKey(r.seed, ns, index)
		r.keys[id] = k
	}
	return k
}

// cachedKey is key without the cache update, safe for concurrent readers.
func (r *registry) cachedKey(ns byte, index uint64) *keyPair {
	if k, ok := r.keys[keyID{ns, index}]; ok {
		return k
	}
	return deriveKey(r.seed, ns, index)
}

// add registers a script derived outside the registry (see fillerJob).
func (r *registry) add(si *scriptInfo) {
	if _, ok := r.byRef[si.ref]; ok {
		return
	}
	r.byRef[si.ref] = si
	r.byPk[string(si.pkScript)] = si
	for _, k := range si.keys {
		r.keys[k.id] = k
	}
}

// get returns (deriving and registering on first use) the script for ref.
func (r *registry) get(kind ScriptKind, index uint64) (*scriptInfo, error) {
	ref := scriptRef{kind, index}
	if si, ok := r.byRef[ref]; ok {
		return si, nil
	}
	si, err := newScript(r.params, r.seed, ref, r.key)
	if err != nil {
		return nil, err
	}
	r.add(si)
	return si, nil
}

func (r *registry) lookup(pkScript []byte) *scriptInfo { return r.byPk[string(pkScript)] }

func (r *registry) clone() *registry {
	return &registry{params: r.params, seed: r.seed,
		byRef: maps.Clone(r.byRef), byPk: maps.Clone(r.byPk), keys: maps.Clone(r.keys)}
}
