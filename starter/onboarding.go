package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"
)

func (a *app) onboardingCmd() *cobra.Command {
	var merchant string
	cmd := group("onboarding", "Start a merchant's Stripe onboarding, read its status, send its signals",
		`A merchant's onboarding (workflow id onboarding/{merchant_id}) reads the merchant
row and the Stripe account, hands out a relink URL while requirements are due,
explains each with citations, and waits for the merchant to return or Stripe to
report a change, until the account can take charges and payouts.`,
		a.onbStartCmd(&merchant), a.onbStatusCmd(&merchant),
		a.onbSignalCmd(&merchant, "returned", "Tell the onboarding the merchant came back from Stripe's page"),
		a.onbSignalCmd(&merchant, "dashboard", "Ask for a new Express Dashboard login link"),
		a.onbLinkCmd(&merchant))
	cmd.PersistentFlags().StringVar(&merchant, "merchant", "", "merchant id, m_… (required)")
	return cmd
}

// merchantOf refuses a missing merchant before connecting.
func merchantOf(m string) error {
	if m == "" {
		return usagef("--merchant is required")
	}
	if err := onboardingflow.CheckMerchantID(m); err != nil {
		return toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	return nil
}

func (a *app) onbStartCmd(merchant *string) *cobra.Command {
	return &cobra.Command{
		Use:   "start --merchant M",
		Short: "Start the merchant's onboarding (or attach to the running one)",
		Long: `Start the onboarding of --merchant, or attach to the one already running for it
(the output says "attached"). An onboarding that ended is started again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := merchantOf(*merchant); err != nil {
				return err
			}
			return a.withClient(0, func(ctx context.Context, c *client.Client) error {
				h, err := c.StartOnboarding(ctx, onboardingflow.Input{MerchantID: *merchant,
					Request: toolkit.Request{Actor: toolkit.Actor{Type: toolkit.ActorSystem, ID: "starter-cli"}}})
				if err != nil {
					return err
				}
				a.emit(h, func(w io.Writer) {
					how := "started"
					if h.Attached {
						how = "attached to the running onboarding"
					}
					fmt.Fprintf(w, "onboarding %s\n  workflow id  %s\n  run id       %s\n  web ui       %s\n",
						how, h.WorkflowID, h.RunID, uiLink(a.uiBase(), c.Namespace(), h.WorkflowID, h.RunID))
				})
				return nil
			})
		},
	}
}

func (a *app) onbStatusCmd(merchant *string) *cobra.Command {
	return &cobra.Command{
		Use:   "status --merchant M",
		Short: "Print the onboarding's state, due requirements and explanations",
		Long: `Print the answer of the onboarding's status query: state, what Stripe still
requires and the cited explanations, links (hash and expiry only: 'link'
reveals one), support-staff review, refused signals. --json prints all of it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withOnboarding(*merchant, func(_ context.Context, st onboardingflow.Status) error {
				a.emit(st, func(w io.Writer) { printOnboarding(w, st) })
				return nil
			})
		},
	}
}

func (a *app) onbSignalCmd(merchant *string, name, short string) *cobra.Command {
	var refresh bool
	c := &cobra.Command{
		Use:   name + " --merchant M",
		Short: short,
		Long:  short + ` (the ` + name + ` signal).`,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := merchantOf(*merchant); err != nil {
				return err
			}
			return a.withClient(0, func(ctx context.Context, c *client.Client) error {
				var err error
				if name == onboardingflow.SignalReturned {
					err = c.Returned(ctx, *merchant, refresh)
				} else {
					err = c.Dashboard(ctx, *merchant)
				}
				if err != nil {
					return err
				}
				a.emit(map[string]string{"signal": name, "merchant_id": *merchant}, func(w io.Writer) {
					fmt.Fprintf(w, "sent %s to onboarding/%s\n", name, *merchant)
				})
				return nil
			})
		},
	}
	if name == onboardingflow.SignalReturned {
		c.Flags().BoolVar(&refresh, "refresh", false, "the merchant landed on refresh_url (the link expired or was used)")
	}
	return c
}

func (a *app) onbLinkCmd(merchant *string) *cobra.Command {
	var login bool
	c := &cobra.Command{
		Use:   "link --merchant M [--login]",
		Short: "Reveal the current relink URL (or the latest login link); the read is logged",
		Long: `Print the current relink URL (--login: the latest Express login link) from its
encrypted evidence snapshot. The URL is a bearer secret: the workflow keeps only
its hash, and every reveal is written to evidence_access_log. Needs
CARTWRIGHT_PG_DSN and CARTWRIGHT_EVIDENCE_KEY.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withOnboarding(*merchant, func(ctx context.Context, st onboardingflow.Status) error {
				l, err := revealLink(ctx, st, login)
				if err != nil {
					return err
				}
				a.emit(map[string]string{"url": l.URL, "expires_at": l.ExpiresAt}, func(w io.Writer) { fmt.Fprintf(w, "%s\nexpires %s\n", l.URL, l.ExpiresAt) })
				return nil
			})
		},
	}
	c.Flags().BoolVar(&login, "login", false, "reveal the latest login link instead of the relink URL")
	return c
}

// withOnboarding checks the merchant id, reads its onboarding's status
// through the client and hands it to fn.
func (a *app) withOnboarding(merchant string, fn func(context.Context, onboardingflow.Status) error) error {
	if err := merchantOf(merchant); err != nil {
		return err
	}
	return a.withClient(0, func(ctx context.Context, c *client.Client) error {
		st, err := c.OnboardingStatus(ctx, merchant)
		if err != nil {
			return err
		}
		return fn(ctx, st)
	})
}

// revealLink reads the onboarding's current relink URL (login: its latest
// login link) from the link's encrypted evidence snapshot: the status query
// only ever holds the URL's hash. The read is written to the access log.
func revealLink(ctx context.Context, st onboardingflow.Status, login bool) (stripetools.RevealedLink, error) {
	ref := st.Relink
	if login {
		ref = nil
		if n := len(st.Logins); n > 0 {
			ref = &st.Logins[n-1]
		}
	}
	if ref == nil || ref.SnapshotID == "" {
		return stripetools.RevealedLink{}, toolkit.Errorf(toolkit.NotFound, "no such link yet (see the status command)")
	}
	cfg, err := config.Load()
	if err != nil {
		return stripetools.RevealedLink{}, toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	pool, err := db.Open(ctx, cfg.PostgresDSN)
	if err != nil {
		return stripetools.RevealedLink{}, toolkit.Errorf(toolkit.UpstreamError, "%v", err)
	}
	defer pool.Close()
	store, err := evidence.NewStoreFromConfig(pool, cfg, zap.NewNop())
	if err != nil {
		return stripetools.RevealedLink{}, toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	return stripetools.RevealLink(ctx, store, ref.SnapshotID, ref.URLSHA256, "starter-cli")
}

// printOnboarding is the text form of an onboarding's status.
func printOnboarding(w io.Writer, st onboardingflow.Status) {
	fmt.Fprintf(w, "onboarding/%s: %s (account %s, %d status reads, run %d)\n",
		st.MerchantID, st.State, st.StripeAccountID, st.StatusReads, st.Runs)
	for _, d := range st.Due {
		fmt.Fprintf(w, "  due          %s\n", d)
	}
	for _, e := range st.Explanations {
		shown := "shown"
		if !e.Shown {
			shown = "not shown (" + e.Review + ")"
		}
		fmt.Fprintf(w, "  explains     %s: %s [%d citation(s), %s]\n", e.Requirement, e.Claim, len(e.Citations), shown)
	}
	if l := st.Relink; l != nil {
		fmt.Fprintf(w, "  relink URL   %s…, expires %s (reveal: onboarding link)\n", short(l.URLSHA256, 19),
			l.ExpiresAt.UTC().Format("2006-01-02 15:04:05Z"))
	}
	if p := st.Approval.Pending; p != nil {
		fmt.Fprintf(w, "  awaiting     support staff: %s (approval_id %s)\n", p.Question, p.ApprovalID)
	}
	if st.Log.Total > 0 {
		last := st.Log.Rejected[len(st.Log.Rejected)-1]
		fmt.Fprintf(w, "  rejected     %d signal(s); last: %s %s: %s\n", st.Log.Total, last.Signal, last.Reason, last.Detail)
	}
	if e := st.LastError; e != nil {
		fmt.Fprintf(w, "  last error   %s %s: %s\n", e.Step, e.Code, e.Message)
	}
}

func short(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
