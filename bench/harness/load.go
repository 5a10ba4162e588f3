package harness

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/traceforge/traceforge/bench/gen"
)

// RawRequest serializes req as an HTTP/1.1 keep-alive request for host.
func RawRequest(host string, req gen.Request, extra http.Header) []byte {
	b := make([]byte, 0, len(req.Body)+256)
	b = append(b, "POST "+req.Path+" HTTP/1.1\r\nHost: "+host+"\r\n"...)
	write := func(h http.Header) {
		for k, vs := range h {
			for _, v := range vs {
				b = append(b, k+": "+v+"\r\n"...)
			}
		}
	}
	write(req.Header)
	write(extra)
	b = append(b, "Content-Length: "+strconv.Itoa(len(req.Body))+"\r\n\r\n"...)
	return append(b, req.Body...)
}

// Source hands out the raw request for the seq-th call of a connection.
type Source func(conn, seq int) []byte

// LoadConfig is one fixed-duration load run.
type LoadConfig struct {
	Addr     string        // host:port
	Conns    int           // keep-alive connections, one goroutine each
	Warmup   time.Duration // calls made before the window are not counted
	Duration time.Duration // the measured window
	Source   Source
	// OnWindow is called with true when the window opens and false when it
	// closes (the harness samples the server's CPU there).
	OnWindow func(open bool)
}

// LoadResult summarizes the calls completed inside the window.
type LoadResult struct {
	Requests int64         `json:"requests"`
	Errors   int64         `json:"errors"`
	Window   time.Duration `json:"window_ns"`
	RPS      float64       `json:"rps"`
	P50      time.Duration `json:"p50_ns"`
	P99      time.Duration `json:"p99_ns"`
	FirstErr string        `json:"first_error,omitempty"`
	// Answered counts every 2xx answer of the run, warm-up and the calls
	// finishing after the window included: a recording proxy must have
	// written exactly this many files.
	Answered int64 `json:"answered"`
	// Spans are, per connection, the calls it made (Source's seq): the
	// memo hit rate of a replay row is computed from them (MemoHitRate).
	Spans []Span `json:"spans,omitempty"`
}

// Span is what one connection of a load run sent: calls with seq in
// [0, Sent), of which those in [First, First+Counted) were counted in
// the window.
type Span struct {
	Sent    int `json:"sent"`
	First   int `json:"first"`
	Counted int `json:"counted"`
}

// conn is one keep-alive client connection.
type conn struct {
	addr string
	c    net.Conn
	br   *bufio.Reader
}

func (c *conn) close() {
	if c.c != nil {
		c.c.Close()
		c.c = nil
	}
}

// do sends raw and reads the whole answer. ttfb is the time to the first
// byte of the response body (the first SSE event of a stream).
func (c *conn) do(raw []byte) (status int, ttfb, total time.Duration, err error) {
	if c.c == nil {
		nc, err := net.Dial("tcp", c.addr)
		if err != nil {
			return 0, 0, 0, err
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
		c.c, c.br = nc, bufio.NewReaderSize(nc, 64<<10)
	}
	start := time.Now()
	if _, err := c.c.Write(raw); err != nil {
		c.close()
		return 0, 0, 0, err
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		c.close()
		return 0, 0, 0, err
	}
	var one [1]byte
	n, err := io.ReadFull(resp.Body, one[:])
	ttfb = time.Since(start)
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		_, err = io.Copy(io.Discard, resp.Body)
	}
	resp.Body.Close()
	total = time.Since(start)
	if n == 0 {
		ttfb = total
	}
	if err != nil || resp.Close {
		c.close()
	}
	return resp.StatusCode, ttfb, total, err
}

// RunLoad runs cfg and reports the window's figures. Non-2xx answers count
// as errors.
func RunLoad(cfg LoadConfig) LoadResult {
	var (
		measuring atomic.Bool
		stop      atomic.Bool
		errs      atomic.Int64
		answered  atomic.Int64
		firstErr  atomic.Value
		wg        sync.WaitGroup
	)
	lat := make([][]time.Duration, cfg.Conns)
	spans := make([]Span, cfg.Conns)
	for w := 0; w < cfg.Conns; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c := &conn{addr: cfg.Addr}
			defer c.close()
			local := make([]time.Duration, 0, 1<<14)
			sp := Span{First: -1}
			for seq := 0; !stop.Load(); seq++ {
				raw := cfg.Source(w, seq)
				status, _, total, err := c.do(raw)
				sp.Sent = seq + 1
				if err == nil && (status < 200 || status > 299) {
					err = fmt.Errorf("HTTP %d", status)
				}
				if err == nil {
					answered.Add(1)
				}
				if !measuring.Load() {
					continue
				}
				if sp.First < 0 {
					sp.First = seq
				}
				sp.Counted = seq + 1 - sp.First
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				local = append(local, total)
			}
			if sp.First < 0 {
				sp.First = sp.Sent
			}
			lat[w], spans[w] = local, sp
		}(w)
	}
	time.Sleep(cfg.Warmup)
	if cfg.OnWindow != nil {
		cfg.OnWindow(true)
	}
	start := time.Now()
	measuring.Store(true)
	time.Sleep(cfg.Duration)
	measuring.Store(false)
	window := time.Since(start)
	if cfg.OnWindow != nil {
		cfg.OnWindow(false)
	}
	stop.Store(true)
	wg.Wait()
	// A call that finished after the window closed was not counted (the
	// flag is read after the call returns), so requests ≈ calls completed
	// inside the window.
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	res := LoadResult{Requests: int64(len(all)), Errors: errs.Load(), Window: window, Answered: answered.Load(), Spans: spans}
	if v, ok := firstErr.Load().(string); ok {
		res.FirstErr = v
	}
	res.RPS = float64(res.Requests) / window.Seconds()
	res.P50, res.P99 = Percentile(all, 0.50), Percentile(all, 0.99)
	return res
}

// Percentile returns the q-quantile of d (sorted in place), 0 when empty.
func Percentile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	i := int(q*float64(len(d)-1) + 0.5)
	return d[i]
}

// Sequential sends n calls one after the other on one connection and
// returns each call's total time and time to first body byte.
func Sequential(addr string, n int, next func(i int) []byte) (total, ttfb []time.Duration, err error) {
	c := &conn{addr: addr}
	defer c.close()
	for i := 0; i < n; i++ {
		status, tf, tt, err := c.do(next(i))
		if err == nil && (status < 200 || status > 299) {
			err = fmt.Errorf("HTTP %d", status)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("call %d: %w", i, err)
		}
		total = append(total, tt)
		ttfb = append(ttfb, tf)
	}
	return total, ttfb, nil
}

// SetSource cycles through the calls of items [0, n); each connection
// starts at its own offset (SourceItem).
func SetSource(host string, n int, stream bool, conns int) Source {
	return KindSource(host, gen.Chat, n, stream, conns)
}

// SourceItem is the item of the seq-th call of connection c when conns
// connections cycle through n items, each starting at its own offset:
// every item is sent once before any is sent again (n distinct requests,
// however large n is: a replay memo smaller than n never sees a request
// again before it has forgotten it).
func SourceItem(c, seq, n, conns int) int {
	return int((int64(c)*int64(n)/int64(max(conns, 1)) + int64(seq)) % int64(n))
}

// KindSource is SetSource over the calls of kind.
func KindSource(host string, kind gen.Kind, n int, stream bool, conns int) Source {
	raws := make([][]byte, n)
	var wg sync.WaitGroup
	workers := 4
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += workers {
				raws[i] = KindRaw(host, kind, i, stream, nil)
			}
		}(w)
	}
	wg.Wait()
	return func(c, seq int) []byte { return raws[SourceItem(c, seq, n, conns)] }
}
