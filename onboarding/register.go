package onboarding

import (
	"errors"

	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/merchant"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// Deps are the clients behind the five onboarding tools.
type Deps struct {
	Merchants *merchant.Store
	Stripe    *stripetools.Client
	Knowledge Citer
	Logger    *zap.Logger
}

// RegisterTools adds merchant.get_row, stripe.get_account_status,
// stripe.create_relink_url, stripe.create_login_link and knowledge.cite to reg.
func RegisterTools(reg *toolkit.Registry, d Deps) error {
	if d.Merchants == nil || d.Stripe == nil || d.Knowledge == nil {
		return errors.New("onboarding: RegisterTools needs Merchants, Stripe and Knowledge")
	}
	if err := merchant.RegisterTools(reg, merchant.Deps{Store: d.Merchants, Logger: d.Logger}); err != nil {
		return err
	}
	if err := stripetools.RegisterTools(reg, d.Stripe); err != nil {
		return err
	}
	return RegisterCite(reg, d.Knowledge)
}

// RegisterCite adds knowledge.cite alone (tests, and binaries without Stripe).
func RegisterCite(reg *toolkit.Registry, ix Citer) error {
	if ix == nil {
		return errors.New("onboarding: RegisterCite needs an index")
	}
	return reg.Register(CiteSpec(), citeHandler(ix))
}

// Specs are the five onboarding tools' specs, exactly as RegisterTools
// registers them: what workflows derive their activity options from.
func Specs() []toolkit.Spec {
	return []toolkit.Spec{merchant.GetRowSpec(), stripetools.AccountStatusSpec(), stripetools.RelinkURLSpec(),
		stripetools.LoginLinkSpec(), CiteSpec()}
}
