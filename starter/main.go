// Command starter is cartwright's command line: start and drive draft
// orders and merchant onboardings, audit workflow runs against the
// evidence store, run a reconcile pass, and (for `make dev`) start a
// sample draft order.
//
// Connection settings are the Temporal SDK's environment variables
// (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TLS_*, TEMPORAL_API_KEY)
// and cartwright's (CARTWRIGHT_TASK_QUEUE, CARTWRIGHT_PG_DSN,
// CARTWRIGHT_EVIDENCE_KEY …); `. .data/env` sets them for the dev stack.
//
// Exit codes, the same for every command:
//
//	0  done
//	1  the system answered no: a signal the workflow refused, a draft order
//	   that ended without a draft (blocked, out of stock, cancelled …),
//	   audit findings, reconcile violations
//	2  could not run: wrong usage or flags, an invalid order file, a
//	   workflow that does not exist, an unreachable server or database,
//	   no answer in time; also a draft order a tool refused with
//	   INVALID_ARGUMENT (or another code exit 2 stands for), so the same
//	   refusal exits alike from `tool call` and `draft-order start`
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
