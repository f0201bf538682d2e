package regtest

// Pid is btcd's process id, 0 while it is not running (benchmarks read its
// CPU time from /proc).
func (n *Node) Pid() int { return n.proc.Pid() }
