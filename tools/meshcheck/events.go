package meshcheck

import "fmt"

// BlockEvent is an event of /events/blocks as answered.
type BlockEvent struct {
	Sequence        int64   `json:"sequence"`
	BlockIdentifier BlockID `json:"block_identifier"`
	Type            string  `json:"type"`
}

type eventsAnswer struct {
	MaxSequence int64        `json:"max_sequence"`
	Events      []BlockEvent `json:"events"`
}

// Events reads the whole block event stream from sequence 0 in pages of
// limit, and checks it as a client following it relies on it: sequences
// from 0 without a gap up to max_sequence, each added block one above
// the top one, each removal that of the top block. It returns the events and the chain they leave, which must be
// the served chain (the caller compares it with /block).
func (c *Client) Events(limit int) (events []BlockEvent, chain []BlockID, err error) {
	for {
		var a eventsAnswer
		if err := c.Call("/events/blocks", map[string]any{"offset": len(events), "limit": limit}, &a); err != nil {
			return nil, nil, err
		}
		for _, e := range a.Events {
			if e.Sequence != int64(len(events)) {
				return nil, nil, fmt.Errorf("event %d has sequence %d", len(events), e.Sequence)
			}
			switch e.Type {
			case "block_added":
				if e.BlockIdentifier.Index != int64(len(chain)) {
					return nil, nil, fmt.Errorf("event %d adds %v on a chain of %d blocks", e.Sequence, e.BlockIdentifier, len(chain))
				}
				chain = append(chain, e.BlockIdentifier)
			case "block_removed":
				if len(chain) == 0 || chain[len(chain)-1] != e.BlockIdentifier {
					return nil, nil, fmt.Errorf("event %d removes %v, not the top block", e.Sequence, e.BlockIdentifier)
				}
				chain = chain[:len(chain)-1]
			default:
				return nil, nil, fmt.Errorf("event %d has type %q", e.Sequence, e.Type)
			}
			events = append(events, e)
		}
		if int64(len(events)) > a.MaxSequence {
			return events, chain, nil
		}
		if len(a.Events) == 0 {
			return nil, nil, fmt.Errorf("no events from %d; max_sequence is %d", len(events), a.MaxSequence)
		}
	}
}
