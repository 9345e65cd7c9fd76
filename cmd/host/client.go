package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/warrenhq/warren/operator"
	"github.com/warrenhq/warren/serve"
)

// serverFlags are how a client command reaches host serve.
type serverFlags struct {
	Server    string `default:"http://127.0.0.1:7070" help:"The address of host serve." placeholder:"URL"`
	Token     string `env:"WARREN_TOKEN" help:"The server's token (default: the one kept in --state-root)." placeholder:"TOKEN"`
	StateRoot string `default:"warren-serve" help:"The server's state root, to read its token from when --token is not given." placeholder:"DIR"`
}

// apiClient is a thin client of the served API: the CLI's runs and answer commands use the same
// routes as the dashboard.
type apiClient struct {
	base, token string
	http        *http.Client
}

func (f *serverFlags) client() (*apiClient, error) {
	tok := f.Token
	if tok == "" {
		raw, err := os.ReadFile(filepath.Join(f.StateRoot, "token"))
		if err != nil {
			return nil, fmt.Errorf("no token: give --token (or WARREN_TOKEN), or --state-root of the server (%v)", err)
		}
		tok = strings.TrimSpace(string(raw))
	}
	return &apiClient{base: strings.TrimRight(f.Server, "/") + serve.APIPrefix, token: tok, http: &http.Client{Timeout: 30 * time.Second}}, nil
}

// errAPI is an error the server answered with.
var errAPI = errors.New("the server refused")

// do sends body (nil: none) to path and decodes the JSON answer into out (nil: ignored).
func (c *apiClient) do(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return fmt.Errorf("%w (%s): %s", errAPI, resp.Status, e.Error)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// runsCmd is host runs: the served runs, one line each.
type runsCmd struct {
	serverFlags
}

// Run lists the runs.
func (r *runsCmd) Run(e *env) error {
	c, err := r.client()
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	var runs []serve.RunInfo
	if err := c.do(http.MethodGet, "/runs", nil, &runs); err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tSTATUS\tTICK\tAGENTS\tPROMPTS\tFILE")
	for _, run := range runs {
		status := run.Status
		if status == "" {
			status = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", run.ID, run.State, status, run.Tick, run.Agents, run.Prompts, run.File)
	}
	return tw.Flush()
}

// answerCmd is host answer: list a run's open prompts, or answer one.
type answerCmd struct {
	serverFlags
	RunID  string `arg:"" name:"run" help:"The run's id (host runs lists them)."`
	Agent  string `arg:"" optional:"" help:"The agent whose prompt to answer (none: list the open prompts)."`
	CallID string `arg:"" optional:"" help:"The prompt's call id."`
	Answer string `arg:"" optional:"" help:"deny, once, stage or run for an approval; the reply for a question."`
	By     string `help:"Who answers (recorded with the answer)." default:"cli"`
}

// Run answers, or lists.
func (a *answerCmd) Run(e *env) error {
	c, err := a.client()
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	if a.Agent == "" {
		var prompts []operator.Prompt
		if err := c.do(http.MethodGet, "/runs/"+a.RunID+"/prompts", nil, &prompts); err != nil {
			fmt.Fprintf(e.stderr, "host: %v\n", err)
			return errBadInput
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "AGENT\tCALL\tKIND\tTOOL\tASKS")
		for _, p := range prompts {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Agent, p.CallID, p.Kind, p.Tool, promptLine(p))
		}
		return tw.Flush()
	}
	if a.CallID == "" || a.Answer == "" {
		fmt.Fprintln(e.stderr, "host: answer RUN AGENT CALL_ID ANSWER (or answer RUN to list the open prompts)")
		return errBadInput
	}
	err = c.do(http.MethodPost, "/runs/"+a.RunID+"/answer", serve.Answer{Agent: a.Agent, CallID: a.CallID, Answer: a.Answer, By: a.By}, nil)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	fmt.Fprintf(e.stdout, "answered %s's %s: %s (applied at the run's next tick)\n", a.Agent, a.CallID, a.Answer)
	return nil
}

// promptLine says what a prompt asks, in one line.
func promptLine(p operator.Prompt) string {
	if p.Kind == "question" {
		if len(p.Choices) > 0 {
			return fmt.Sprintf("%s [%s]", p.Text, strings.Join(p.Choices, "/"))
		}
		return p.Text
	}
	return "may it run? keys " + strings.Join(p.Keys, ", ") + " [deny/once/stage/run]"
}
