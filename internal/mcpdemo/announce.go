package mcpdemo

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// announcePrefix starts the first line of stdout in HTTP mode, before the server's URL.
const announcePrefix = "listening "

// ErrNoAnnouncement: an HTTP-mode server's first line of stdout is not "listening URL".
var ErrNoAnnouncement = errors.New("no address announced")

// announce writes the line that tells a caller where an HTTP-mode server listens.
func announce(w io.Writer, url string) error {
	_, err := fmt.Fprintf(w, "%s%s\n", announcePrefix, url)
	return err
}

// ReadAnnouncement reads the first line an HTTP-mode server writes to stdout and returns the URL
// it announces; the reader is left after that line.
func ReadAnnouncement(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("%w: %q: %w", ErrNoAnnouncement, line, err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), announcePrefix)
	if !ok {
		return "", fmt.Errorf("%w: the first line is %q", ErrNoAnnouncement, line)
	}
	return url, nil
}

// StartHTTP starts cmd, the demo server in HTTP mode (its own binary, or a Warren binary
// re-executed under mcpconfig.DemoReexecName), and returns the URL it announces. The caller stops the process.
func StartHTTP(cmd *exec.Cmd) (string, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	url, err := ReadAnnouncement(bufio.NewReader(stdout))
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return "", err
	}
	return url, nil
}
