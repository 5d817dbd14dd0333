// Package onboardingcli is `starter onboarding`: start a merchant's
// onboarding, read its status, send it the merchant's signals, and reveal
// the current relink URL or login link (an access-logged read of encrypted
// evidence) for manual testing against a real Stripe test account.
package onboardingcli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/internal/tclient"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitFail  = 1
	ExitUsage = 2
)

const usage = `usage: starter onboarding <command> -merchant m_…
  start     start (or find) the merchant's onboarding workflow
  status    print the status query as JSON
  returned  send the returned signal (-refresh for refresh_url)
  dashboard send the dashboard signal (a new Express login link)
  link      print the current relink URL (-login: the latest login link);
            the read is logged in evidence_access_log`

// RunCLI runs one command; args start with the command name.
func RunCLI(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return ExitUsage
	}
	fs := flag.NewFlagSet("onboarding "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	merchantID := fs.String("merchant", "", "merchant id (m_…)")
	refresh := fs.Bool("refresh", false, "returned: the merchant landed on refresh_url")
	login := fs.Bool("login", false, "link: reveal the latest login link instead of the relink URL")
	if err := fs.Parse(args[1:]); err != nil {
		return ExitUsage
	}
	wfID, err := workflows.OnboardingID(*merchantID)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return ExitUsage
	}
	tc, err := tclient.Dial(ctx, zap.NewNop())
	if err != nil {
		fmt.Fprintln(stderr, err)
		return ExitFail
	}
	defer tc.Close()
	c := cmd{ctx: ctx, cfg: cfg, tc: tc, wfID: wfID, merchantID: *merchantID, out: stdout}
	switch args[0] {
	case "start":
		err = c.start()
	case "status":
		err = c.status()
	case "returned":
		err = tc.SignalWorkflow(ctx, wfID, "", workflows.SignalReturned, workflows.ReturnedSignal{Refresh: *refresh})
	case "dashboard":
		err = tc.SignalWorkflow(ctx, wfID, "", workflows.SignalDashboard, workflows.DashboardSignal{})
	case "link":
		err = c.link(*login)
	default:
		fmt.Fprintln(stderr, usage)
		return ExitUsage
	}
	if err != nil {
		fmt.Fprintln(stderr, toolkit.SanitizeText(err.Error()))
		return ExitFail
	}
	return ExitOK
}

type cmd struct {
	ctx        context.Context
	cfg        config.Config
	tc         client.Client
	wfID       string
	merchantID string
	out        io.Writer
}

func (c cmd) start() error {
	run, err := c.tc.ExecuteWorkflow(c.ctx, client.StartWorkflowOptions{
		ID: c.wfID, TaskQueue: c.cfg.TaskQueue,
		TypedSearchAttributes: workflows.StartSearchAttributes(workflows.FlowOnboarding, workflows.OnboardingReadingMerchant),
	}, workflows.OnboardingWorkflowName, workflows.OnboardingInput{
		MerchantID: c.merchantID, Deadline: c.cfg.OnboardingDeadline, ApprovalWindow: c.cfg.ApprovalWindow,
		Request: toolkit.Request{UserID: c.merchantID, Actor: toolkit.Actor{Type: toolkit.ActorSystem, ID: "starter-cli"}},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.out, "workflow %s run %s\n", run.GetID(), run.GetRunID())
	return nil
}

func (c cmd) query() (workflows.OnboardingStatus, error) {
	var st workflows.OnboardingStatus
	v, err := c.tc.QueryWorkflow(c.ctx, c.wfID, "", workflows.QueryStatus)
	if err != nil {
		return st, err
	}
	return st, v.Get(&st)
}

func (c cmd) status() error {
	st, err := c.query()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(c.out)
	enc.SetIndent("", "  ")
	return enc.Encode(st)
}

// link reveals a link from its evidence snapshot; the status query only
// ever holds its hash.
func (c cmd) link(login bool) error {
	st, err := c.query()
	if err != nil {
		return err
	}
	ref := st.Relink
	if login {
		ref = nil
		if n := len(st.Logins); n > 0 {
			ref = &st.Logins[n-1]
		}
	}
	if ref == nil || ref.SnapshotID == "" {
		return errors.New("no such link yet (see the status command)")
	}
	pool, err := db.Open(c.ctx, c.cfg.PostgresDSN)
	if err != nil {
		return err
	}
	defer pool.Close()
	store, err := evidence.NewStoreFromConfig(pool, c.cfg, zap.NewNop())
	if err != nil {
		return err
	}
	l, err := stripetools.RevealLink(c.ctx, store, ref.SnapshotID, ref.URLSHA256, "starter-cli")
	if err != nil {
		return err
	}
	fmt.Fprintf(c.out, "%s\nexpires %s\n", l.URL, l.ExpiresAt)
	return nil
}
