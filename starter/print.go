package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// printStatus is the text form of a draft order's status query.
func printStatus(w io.Writer, id string, st draftorder.Status) {
	fmt.Fprintf(w, "%s: %s (to %s, in %s)\n", id, st.State, st.Destination, st.Currency)
	if t := st.Total; t != nil {
		fmt.Fprintf(w, "  total        %s  (subtotal %s, shipping %s, duty %s, tax %s, %s)\n",
			t.GrandTotal.Display(), t.Subtotal.Display(), t.Shipping.Display(), t.Duty.Display(), t.Tax.Display(), t.Incoterm)
		if t.DueOnDelivery.Amount > 0 {
			fmt.Fprintf(w, "  on delivery  %s duty and tax, paid to the carrier\n", t.DueOnDelivery.Display())
		}
		printAssumed(w, *t)
	}
	if o := st.Origins; o != nil {
		printOrigins(w, *o)
	}
	if wr := st.Waiting; wr != nil {
		why := string(wr.Code)
		if wr.UpstreamCode != "" {
			why += ", " + wr.UpstreamCode
		}
		fmt.Fprintf(w, "  waiting      for %s since %s: %s (%s); call %d failed, the next at %s; a cancel stops it at once\n",
			wr.Call, wr.Since.UTC().Format("15:04:05Z"), wr.Message, why, wr.Tries, wr.NextTryAt.UTC().Format("15:04:05Z"))
	}
	if c := st.Confirmation; c != nil {
		if c.PriceChanged {
			fmt.Fprintf(w, "  PRICE CHANGED since quote_hash %s was confirmed\n", c.PreviousQuoteHash)
		}
		fmt.Fprintf(w, "  awaiting     the user's confirmation of %s\n", c.GrandTotal.Display())
		fmt.Fprintf(w, "  quote_hash   %s\n", c.QuoteHash)
		fmt.Fprintf(w, "  confirm by   %s (prices held until %s)\n", c.ConfirmBy.UTC().Format("2006-01-02 15:04:05Z"),
			c.QuoteExpiresAt.UTC().Format("15:04:05Z"))
	}
	if p := st.Approvals.Pending; p != nil {
		fmt.Fprintf(w, "  awaiting     support staff: %s (approval_id %s, until %s)\n", p.Question, p.ApprovalID,
			p.ExpiresAt.UTC().Format("2006-01-02 15:04:05Z"))
		for _, f := range p.Facts {
			fmt.Fprintf(w, "               - %s\n", f)
		}
	}
	if c := st.Compliance; c != nil {
		fmt.Fprintf(w, "  compliance   %s (confidence %.2f)\n", c.Verdict, c.Confidence)
	}
	for _, d := range st.Approvals.Decisions {
		fmt.Fprintf(w, "  approval     %s by %s %s\n", d.Decision, d.Approver, d.Reason)
		if d.SealID != "" {
			fmt.Fprintf(w, "               sealed %s\n", d.SealID)
		}
	}
	if st.Rejected.Total > 0 {
		last := st.Rejected.Rejected[len(st.Rejected.Rejected)-1]
		fmt.Fprintf(w, "  rejected     %d signal(s); last: %s %s: %s\n", st.Rejected.Total, last.Signal, last.Reason, last.Detail)
	}
	if r := st.Result; r != nil {
		printResultLine(w, *r)
	}
	if o := st.Order; o != nil {
		fmt.Fprintf(w, "  hold         %s until %s (order-status shows the payment and stock)\n", o.State,
			o.HoldUntil.UTC().Format("2006-01-02 15:04:05Z"))
	}
}

// printOrigins is where the order ships from and why
// (docs/tools.md#origin-choice): each parcel, and each warehouse (or way
// to split) that lost, with its reason.
func printOrigins(w io.Writer, o draftorder.OriginsSummary) {
	for _, p := range o.Parcels {
		fmt.Fprintf(w, "  ships from   %s: %s, %s by %s, %d-%d days, landed %s\n", p.ShipFrom, strings.Join(p.SKUs, ", "),
			p.ServiceLevel, p.Carrier, p.MinDays, p.MaxDays, p.Landed.Total.Display())
	}
	for _, c := range append(append(o.Candidates[:0:0], o.Candidates...), o.Splits...) {
		if !c.Chosen {
			fmt.Fprintf(w, "  not from     %s: %s (%s)\n", strings.Join(c.Origins, "+"), strings.ReplaceAll(c.Rejected, "_", " "), c.Reason)
		}
	}
}

// printResult is the text form of a draft order's result.
func printResult(w io.Writer, id string, r draftorder.Result) {
	fmt.Fprintf(w, "%s: %s\n", id, r.State)
	if r.Total != nil {
		fmt.Fprintf(w, "  total        %s\n", r.Total.GrandTotal.Display())
	}
	printResultLine(w, r)
}

func printResultLine(w io.Writer, r draftorder.Result) {
	if d := r.DraftOrder; d != nil && d.DraftOrderID != "" {
		fmt.Fprintf(w, "  draft order  %s (%s, expires %s)\n", d.DraftOrderID, d.Status, d.ExpiresAt.UTC().Format("2006-01-02 15:04:05Z"))
	}
	msg := r.Message
	if r.Code != "" && string(r.Code) != r.State {
		msg += " (" + string(r.Code) + ")"
	}
	fmt.Fprintf(w, "  ended        %s — %s\n", r.State, msg)
	printRefusal(w, r.Error)
}

// succeeded: the draft order was created (or, on a dry run, validated).
func succeeded(r draftorder.Result) bool {
	return r.State == draftorder.StateDraftCreated || r.State == draftorder.StateDryRunValidated
}

// uiLink is the Web UI page of a run's history.
func uiLink(base, namespace, id, runID string) string {
	return fmt.Sprintf("%s/namespaces/%s/workflows/%s/%s/history",
		strings.TrimRight(base, "/"), url.PathEscape(namespace), url.PathEscape(id), url.PathEscape(runID))
}

// confirmCommands are the two ways to confirm from a shell: this CLI, and
// the Temporal CLI's raw signal with the payload draftorder.ConfirmSignal.
func confirmCommands(starter, temporal, address, namespace, id, quoteHash string) (ours, raw string) {
	ours = fmt.Sprintf("%s draft-order confirm %s --quote-hash %s", starter, shellQuote(id), shellQuote(quoteHash))
	raw = fmt.Sprintf("%s workflow signal%s --workflow-id %s --name %s --input %s",
		temporal, connFlags(address, namespace), shellQuote(id), draftorder.SignalConfirm,
		shellQuote(fmt.Sprintf(`{"quote_hash":%q}`, quoteHash)))
	return ours, raw
}

// connFlags are the Temporal CLI flags needed when the connection is not
// the CLI's default (127.0.0.1:7233, namespace default).
func connFlags(address, namespace string) string {
	var b strings.Builder
	switch address {
	case "", "127.0.0.1:7233", "localhost:7233":
	default:
		b.WriteString(" --address " + shellQuote(address))
	}
	if namespace != "" && namespace != "default" {
		b.WriteString(" --namespace " + shellQuote(namespace))
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:/-=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// selfName is how to run this binary again from the current directory,
// so printed commands can be pasted as they are: "starter" when that name
// finds it on PATH, else its path relative to here (".bin/starter" under
// make dev, which runs it by absolute path), else its absolute path.
func selfName() string {
	if len(os.Args) == 0 {
		return "starter"
	}
	if !strings.ContainsRune(os.Args[0], '/') {
		return os.Args[0]
	}
	abs, err := filepath.Abs(os.Args[0])
	if err != nil {
		return os.Args[0]
	}
	return runnable(abs)
}

// temporalCLI is the Temporal CLI to print: the pinned one `make dev`
// builds into .bin/ beside the starter, else the one on PATH.
func temporalCLI() string {
	if len(os.Args) > 0 {
		if self, err := filepath.Abs(os.Args[0]); err == nil {
			p := filepath.Join(filepath.Dir(self), "temporal")
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				return runnable(p)
			}
		}
	}
	return "temporal"
}

// runnable is the shortest way to name the executable at abs from here:
// its base name if PATH finds it, a path relative to the current
// directory below it, else abs.
func runnable(abs string) string {
	if p, err := exec.LookPath(filepath.Base(abs)); err == nil {
		if pa, err := filepath.Abs(p); err == nil && pa == abs {
			return filepath.Base(abs)
		}
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, abs); err == nil && !strings.HasPrefix(rel, "..") {
			if !strings.ContainsRune(rel, '/') {
				rel = "./" + rel
			}
			return rel
		}
	}
	return abs
}

// printAssumed says what a total assumed: the exchange rates it was priced
// with (source and date) and what its tax leaves out
// (commerce/rules/README.md#us-sales-tax).
func printAssumed(w io.Writer, t commerce.Total) {
	if fx := t.FXRates; fx != nil {
		fmt.Fprintf(w, "  fx rates     %s of %s (%s)\n", strings.ReplaceAll(fx.Source, "_", " "), fx.Date, fx.Base)
	}
	if len(t.TaxNotModelled) > 0 {
		fmt.Fprintf(w, "  not modelled %s: the tax may be higher\n", strings.ReplaceAll(strings.Join(t.TaxNotModelled, ", "), "_", " "))
	}
}
