package mcpdemo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Hostile mode (--hostile) is a server that speaks just enough MCP for a client to list its tools
// and call them, and then abuses that: tool lists as long and as fat as it is told (--tools,
// --page-size, --schema-bytes), and a flood tool whose reply is as large as the call asks, up to
// maxFloodBytes, streamed so that the server itself holds only a chunk of it. It is written on
// JSON-RPC directly rather than with mcp-go, which would build a whole reply in memory before
// writing it, so a test can send a 300 MB reply from a process of a few megabytes and see what
// the client reads of it.

// maxFloodBytes bounds the flood tool's bytes argument.
const maxFloodBytes = 1 << 30

// floodChunk is how much of a flood reply is written at a time.
const floodChunk = 64 << 10

// hostileProtocolVersion is the protocol revision hostile mode answers initialize with: the
// newest one negotiated by the initialize handshake.
const hostileProtocolVersion = "2025-11-25"

// hostileOptions are hostile mode's flags.
type hostileOptions struct {
	name string
	// tools is how many filler tools the list holds besides flood and echo.
	tools int
	// pageSize is how many tools a tools/list page holds (0: one page).
	pageSize int
	// schemaBytes pads every filler tool's input schema to about this many bytes.
	schemaBytes int
}

// rpcRequest is one JSON-RPC message the client sent.
type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// hostileServer answers the requests of one client; its writes go to out under mu, one whole
// message at a time.
type hostileServer struct {
	opts hostileOptions
	mu   sync.Mutex
}

// serveHostileStdio serves one client on stdin/stdout until stdin closes or ctx ends.
func serveHostileStdio(ctx context.Context, opts hostileOptions, stdin io.Reader, stdout io.Writer) error {
	h := &hostileServer{opts: opts}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if ctx.Err() != nil {
			return nil
		}
		var req rpcRequest
		if json.Unmarshal(sc.Bytes(), &req) != nil || len(req.ID) == 0 {
			continue // a notification, or nothing this mode reads
		}
		go func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			_ = h.answer(stdout, &req)
		}()
	}
	return sc.Err()
}

// serveHostileHTTP serves streamable HTTP's single-response form on addr: every POST is one
// request answered by one JSON body (a notification gets 202), announcing the URL on stdout.
func serveHostileHTTP(ctx context.Context, opts hostileOptions, addr string, stdout io.Writer) error {
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	h := &hostileServer{opts: opts}
	mux := http.NewServeMux()
	mux.HandleFunc(endpointPath, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req rpcRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, "not JSON-RPC", http.StatusBadRequest)
			return
		}
		if len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = h.answer(w, &req)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := announce(stdout, fmt.Sprintf("http://%s%s", listener.Addr(), endpointPath)); err != nil {
		_ = listener.Close()
		return fmt.Errorf("announce address: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(listener) }()
	select {
	case err := <-served:
		return fmt.Errorf("http: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// answer writes the reply to one request.
func (h *hostileServer) answer(w io.Writer, req *rpcRequest) error {
	switch req.Method {
	case "initialize":
		return writeResult(w, req.ID, map[string]any{
			"protocolVersion": hostileProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": h.opts.name, "version": serverVersion},
		})
	case "ping":
		return writeResult(w, req.ID, map[string]any{})
	case "tools/list":
		var p struct {
			Cursor string `json:"cursor"`
		}
		_ = json.Unmarshal(req.Params, &p)
		return h.writePage(w, req.ID, p.Cursor)
	case "tools/call":
		var p struct {
			Name      string `json:"name"`
			Arguments struct {
				Bytes int    `json:"bytes"`
				Text  string `json:"text"`
			} `json:"arguments"`
		}
		_ = json.Unmarshal(req.Params, &p)
		switch p.Name {
		case "flood":
			return flood(w, req.ID, min(max(p.Arguments.Bytes, 0), maxFloodBytes))
		case "echo":
			return writeResult(w, req.ID, textResult(p.Arguments.Text))
		}
		return writeError(w, req.ID, -32602, "unknown tool "+strconv.Quote(p.Name))
	}
	return writeError(w, req.ID, -32601, "method not found: "+req.Method)
}

// writePage writes the tools/list reply whose page starts at cursor ("" the first; "p<N>" the
// page that starts at tool N), a tool at a time, so a list of any length costs the server a
// buffer.
func (h *hostileServer) writePage(w io.Writer, id json.RawMessage, cursor string) error {
	total := h.opts.tools + 2
	start, _ := strconv.Atoi(strings.TrimPrefix(cursor, "p"))
	start = min(max(start, 0), total)
	end := total
	if h.opts.pageSize > 0 {
		end = min(start+h.opts.pageSize, total)
	}
	bw := bufio.NewWriterSize(w, floodChunk)
	_, _ = bw.WriteString(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"tools":[`)
	pad := ""
	if h.opts.schemaBytes > 0 {
		pad = `,"properties":{"pad":{"type":"string","description":"` + strings.Repeat("p", h.opts.schemaBytes) + `"}}`
	}
	for i := start; i < end; i++ {
		if i > start {
			_ = bw.WriteByte(',')
		}
		switch i {
		case 0:
			_, _ = bw.WriteString(`{"name":"flood","description":"Answers with a text of bytes bytes.","inputSchema":{"type":"object","properties":{"bytes":{"type":"integer"}}}}`)
		case 1:
			_, _ = bw.WriteString(`{"name":"echo","description":"Returns text unchanged.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}`)
		default:
			_, _ = fmt.Fprintf(bw, `{"name":"filler_%06d","description":"A filler.","inputSchema":{"type":"object"%s}}`, i-2, pad)
		}
	}
	_ = bw.WriteByte(']')
	if end < total {
		_, _ = fmt.Fprintf(bw, `,"nextCursor":"p%d"`, end)
	}
	_, _ = bw.WriteString("}}\n")
	return bw.Flush()
}

// flood writes a tools/call reply whose text is n bytes of 'x', a chunk at a time; it stops at
// the first failed write (the client hung up, or killed the server).
func flood(w io.Writer, id json.RawMessage, n int) error {
	head := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"`
	if _, err := io.WriteString(w, head); err != nil {
		return err
	}
	chunk := bytes.Repeat([]byte{'x'}, floodChunk)
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			return err
		}
		n -= k
	}
	_, err := io.WriteString(w, "\"}]}}\n")
	return err
}

// textResult is a tools/call result of one text.
func textResult(text string) map[string]any {
	return map[string]any{"content": []map[string]any{{"type": "text", "text": text}}}
}

// writeResult writes one JSON-RPC result line.
func writeResult(w io.Writer, id json.RawMessage, result any) error {
	return writeMessage(w, map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// writeError writes one JSON-RPC error line.
func writeError(w io.Writer, id json.RawMessage, code int, message string) error {
	return writeMessage(w, map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
}

// writeMessage writes v as one line of JSON.
func writeMessage(w io.Writer, v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return errors.Join(errors.New("encode a reply"), err)
	}
	_, err = w.Write(append(line, '\n'))
	return err
}
