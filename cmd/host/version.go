package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/warrenhq/warren"
)

// versionText is what `host --version` prints: Warren's version (the one trace headers carry),
// the Go toolchain that built the binary, and the VCS revision it was built from, when the build
// recorded one (go build in a checkout does; go run and go test do not). The revision is for bug
// reports; traces carry only the version, so that they do not change with every commit.
func versionText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "warren   %s\n", warren.Version)
	fmt.Fprintf(&b, "go       %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	b.WriteString("revision " + revision() + "\n")
	return b.String()
}

// revision describes the VCS revision recorded in the binary's build information.
func revision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (the binary carries no build information)"
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	rev := settings["vcs.revision"]
	if rev == "" {
		return "unknown (not recorded: build with go build inside a checkout to record it)"
	}
	out := settings["vcs"] + " " + rev
	var extra []string
	if t := settings["vcs.time"]; t != "" {
		extra = append(extra, t)
	}
	if settings["vcs.modified"] == "true" {
		extra = append(extra, "with uncommitted changes")
	}
	if len(extra) > 0 {
		out += " (" + strings.Join(extra, ", ") + ")"
	}
	return out
}
