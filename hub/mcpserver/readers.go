package mcpserver

import "bufio"

// maxSpareReaders bounds the goroutines of a stdio connection that wait
// to read on after running a fast call.
const maxSpareReaders = 4

// passTurn hands reading to a spare reader, or to a new goroutine when
// none waits. A goroutine that runs a call grows its stack through the
// JSON and CDP code on the way (about 40 µs of copying per call when each
// call ran on a fresh goroutine); a spare keeps its grown stack for the
// next call.
func (c *stdioConn) passTurn(r *bufio.Reader, max int) {
	c.spareMu.Lock()
	if c.spares > 0 {
		c.spares--
		c.spareMu.Unlock()
		select {
		case c.turn <- struct{}{}:
		case <-c.closed:
		}
		return
	}
	c.spareMu.Unlock()
	go c.readLoop(r, max)
}

// waitTurn parks the calling goroutine as a spare reader until passTurn
// wakes it (true: it reads on) or the connection closes (false). It
// returns false at once when enough spares wait already.
func (c *stdioConn) waitTurn() bool {
	c.spareMu.Lock()
	if c.spares >= maxSpareReaders {
		c.spareMu.Unlock()
		return false
	}
	c.spares++
	c.spareMu.Unlock()
	select {
	case <-c.turn:
		return true
	case <-c.closed:
		return false
	}
}
