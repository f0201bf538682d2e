package scalegen

// nextTx draws the next non-coinbase transaction, applies it to the
// unspent set and returns its bytes (valid until the next call) and txid.
// ok is false when nothing is left to spend.
func (s *state) nextTx(tb *txBuilder, fees *int64) ([]byte, [32]byte, bool) {
	s.ins, s.outs = s.ins[:0], s.outs[:0]
	s.whaleTouch = [numWhales]bool{}
	s.acct.spending, s.acct.touched = false, false
	r := s.rng.Float64()
	nIn, nOut := s.numInputs(), s.numOutputs()
	spender := -1
	for w := 0; w < numWhales; w++ {
		if r < whaleSpend[w] {
			spender = w
			break
		}
		r -= whaleSpend[w]
	}
	switch {
	case spender >= 0:
		nIn, nOut = 1+s.rng.IntN(5), 1+s.rng.IntN(3)
		for i := 0; i < nIn; i++ {
			if u, ok := s.takeWhale(spender); ok {
				s.ins = append(s.ins, u)
			}
		}
		if len(s.ins) > 0 {
			s.whaleTouch[spender] = true
		}
	case s.spendAccount():
		nIn, nOut = len(s.ins), 2+s.rng.IntN(2) // one or two payees, change
	case r < 0.004 && s.era > 0.1: // consolidation
		nIn, nOut = 20+s.rng.IntN(40), 1
	case r < 0.02 && s.era > 0.05: // batched payout
		nIn, nOut = 1+s.rng.IntN(3), 10+s.rng.IntN(90)
	}
	for len(s.ins) < nIn {
		u, ok := s.take()
		if !ok {
			break
		}
		s.ins = append(s.ins, u)
	}
	if len(s.ins) == 0 {
		return nil, [32]byte{}, false
	}
	var total int64
	for _, in := range s.ins {
		total += in.value
		if in.addr < numWhales {
			s.whaleTouch[in.addr] = true
		}
	}
	fee := int64(150*len(s.ins) + 40*nOut)
	if total <= fee+int64(nOut)*600 {
		nOut = 1
		fee = min(fee, total/2)
	}
	s.payOutputs(total-fee, nOut, spender)
	*fees += fee
	raw, txid := tb.build(s.ins, s.outs, -1)
	s.addOutputs(txid, s.outs)
	s.stats.Inputs += len(s.ins)
	for w, touched := range s.whaleTouch {
		if touched {
			s.stats.WhaleTxs[w]++
		}
	}
	if s.acct.touched {
		s.stats.Account.Txs++
	}
	return raw, txid, true
}

// payOutputs splits amount over n outputs (outputAddr picks their
// addresses) and adds an OP_RETURN now and then in later eras.
func (s *state) payOutputs(amount int64, n, spender int) {
	left := amount
	for i := 0; i < n; i++ {
		v := left
		if i < n-1 {
			v = left / int64(n-i) * int64(50+s.rng.IntN(100)) / 100
		}
		left -= v
		addr, kind := s.outputAddr(i, n, spender)
		s.outs = append(s.outs, txOut{addr: addr, kind: kind, value: v})
	}
	if s.era > 0.3 && s.rng.Float64() < 0.03 {
		s.outs = append(s.outs, txOut{addr: s.rng.Uint32(), data: true})
	}
}

// outputAddr picks the address of output i of n: change back to a
// spending whale or the account last, a whale or the account now and then
// first, else a payee.
func (s *state) outputAddr(i, n, spender int) (uint32, uint8) {
	if i == n-1 && n > 1 {
		switch {
		case spender >= 0:
			s.whaleTouch[spender] = true // change, even when its own coins ran out
			return uint32(spender), whaleKinds[spender]
		case s.acct.spending:
			return s.changeAddr(), kindP2WPKH
		}
	}
	if i == 0 {
		for w := 0; w < numWhales; w++ {
			if s.rng.Float64() < whaleRecv[w] {
				s.whaleTouch[w] = true
				return uint32(w), whaleKinds[w]
			}
		}
		if s.payAccount() {
			return s.receiveAddr(), kindP2WPKH
		}
	}
	return s.payee()
}

// addOutputs puts a tx's spendable outputs into the unspent set.
func (s *state) addOutputs(txid [32]byte, outs []txOut) {
	for i, o := range outs {
		if o.data {
			s.stats.Outputs++
			s.stats.OutputsByKind["nulldata"]++
			continue
		}
		u := utxo{txid: txid, vout: uint32(i), addr: o.addr, value: o.value, height: uint32(s.height), kind: o.kind}
		switch {
		case o.addr < numWhales:
			s.whales[o.addr] = append(s.whales[o.addr], u)
		case isAccount(o.addr):
			s.acct.utxos = append(s.acct.utxos, u)
		default:
			s.pool = append(s.pool, u)
		}
		s.stats.Outputs++
		s.stats.OutputsByKind[kindNames[o.kind]]++
	}
}
