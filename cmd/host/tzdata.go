package main

// The time zone database is built in, so that TZ is honoured in log timestamps even on a machine
// without /usr/share/zoneinfo (a slim container), and so that the binary the tests build is the
// one `go build` makes with no tags: the build then reuses the test build's compiled packages
// instead of recompiling everything above package time (issue 32 measured minutes of it).
import _ "time/tzdata"
