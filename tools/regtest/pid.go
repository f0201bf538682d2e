package regtest

// Pid is btcd's process id, 0 while it is not running (benchmarks read its
// CPU time from /proc).
func (n *Node) Pid() int {
	if p := n.running(); p != nil {
		return p.cmd.Process.Pid
	}
	return 0
}
