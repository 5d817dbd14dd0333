// Command temporal-server is Temporal's server (go.temporal.io/server, the
// same CLI as its cmd/server) with cartwright's claim mapper and authorizer
// (package authz) for `make cluster`
// (docs/operators.md#who-may-do-what-on-the-cluster). The authorizer is
// cartwright's when the configuration's global.authorization.authorizer is
// "cartwright"; any other value is Temporal's own choice, so the binary
// serves every cluster the project starts.
//
// The cartwright authorizer reads:
//
//	CARTWRIGHT_TEMPORAL_POLICY        the policy file (deploy/temporal/authorization.yaml)
//	CARTWRIGHT_OIDC_ISSUER            the provider's issuer URL (tokens of any other are refused)
//	CARTWRIGHT_OIDC_GROUPS_CLAIM      the claim carrying a staff member's groups (default groups)
//	CARTWRIGHT_TEMPORAL_INTERNODE_CN  the internode certificate's CN and its CA's,
//	CARTWRIGHT_TEMPORAL_INTERNODE_CA_CN   whose token-less calls are Temporal's own
//
// and the provider's JWKS from global.authorization.jwtKeyProvider.keySourceURIs.
package main

import (
	"cmp"
	"fmt"
	stdlog "log"
	"os"
	"path"
	"strings"
	_ "time/tzdata" // embed tzdata as a fallback

	"github.com/urfave/cli/v2"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/headers"
	"go.temporal.io/server/common/log"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // the cluster's store
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"     // Temporal's default config
	"go.temporal.io/server/temporal"

	"github.com/cartwright-dev/cartwright/build/tools/temporalserver/authz"
)

func main() {
	app := cli.NewApp()
	app.Name = "temporal"
	app.Usage = "Temporal server with cartwright's authorizer"
	app.Version = headers.ServerVersion
	app.Flags = []cli.Flag{
		&cli.StringFlag{Name: "root", Aliases: []string{"r"}, Value: ".", EnvVars: []string{config.EnvKeyRoot}},
		&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Value: "config", EnvVars: []string{config.EnvKeyConfigDir}},
		&cli.StringFlag{Name: "env", Aliases: []string{"e"}, Value: "development", EnvVars: []string{config.EnvKeyEnvironment}},
		&cli.StringFlag{Name: "zone", Aliases: []string{"az"}, EnvVars: []string{config.EnvKeyAvailabilityZone}},
		&cli.BoolFlag{Name: "allow-no-auth", Usage: "allow no authorizer", EnvVars: []string{config.EnvKeyAllowNoAuth}},
	}
	app.Commands = []*cli.Command{{
		Name:  "start",
		Usage: "Start Temporal server",
		Flags: []cli.Flag{&cli.StringSliceFlag{Name: "service", Aliases: []string{"svc"},
			Value: cli.NewStringSlice(temporal.DefaultServices...)}},
		Action: start,
	}}
	if err := app.Run(os.Args); err != nil {
		stdlog.Fatal(err)
	}
}

func start(c *cli.Context) error {
	cfg, err := config.LoadConfig(c.String("env"), path.Join(c.String("root"), c.String("config")), c.String("zone"))
	if err != nil {
		return cli.Exit(fmt.Sprintf("Unable to load configuration: %v.", err), 1)
	}
	logger := log.NewZapLogger(log.BuildZapLogger(cfg.Log))
	dc := dynamicconfig.Client(dynamicconfig.NewNoopClient())
	if cfg.DynamicConfigClient != nil {
		if dc, err = dynamicconfig.NewFileBasedClient(cfg.DynamicConfigClient, logger, temporal.InterruptCh()); err != nil {
			return cli.Exit(fmt.Sprintf("Unable to create dynamic config client: %v", err), 1)
		}
	}
	authorizer, claimMapper, err := authorizerOf(&cfg.Global.Authorization, logger)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	if authorization.IsNoopAuthorizer(authorizer) && !c.Bool("allow-no-auth") {
		return cli.Exit("no authorizer configured and no --allow-no-auth", 1)
	}
	audience, err := authorization.GetAudienceMapperFromConfig(&cfg.Global.Authorization)
	if err != nil {
		return cli.Exit(fmt.Sprintf("Unable to instantiate audience mapper: %v.", err), 1)
	}
	s, err := temporal.NewServer(
		temporal.ForServices(c.StringSlice("service")),
		temporal.WithConfig(cfg),
		temporal.WithDynamicConfigClient(dc),
		temporal.WithLogger(logger),
		temporal.InterruptOn(temporal.InterruptCh()),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithAudienceGetter(func(*config.Config) authorization.JWTAudienceMapper { return audience }),
	)
	if err != nil {
		return cli.Exit(fmt.Sprintf("Unable to create server: %v.", err), 1)
	}
	if err := s.Start(); err != nil {
		return cli.Exit(fmt.Sprintf("Unable to start server: %v", err), 1)
	}
	return cli.Exit("All services are stopped.", 0)
}

// authorizerOf: cartwright's pair when the configuration names it,
// Temporal's own otherwise.
func authorizerOf(ac *config.Authorization, logger log.Logger) (authorization.Authorizer, authorization.ClaimMapper, error) {
	if !strings.EqualFold(ac.Authorizer, "cartwright") {
		a, err := authorization.GetAuthorizerFromConfig(ac)
		if err != nil {
			return nil, nil, fmt.Errorf("authorizer: %w", err)
		}
		cm, err := authorization.GetClaimMapperFromConfig(ac, logger)
		if err != nil {
			return nil, nil, fmt.Errorf("claim mapper: %w", err)
		}
		return a, cm, nil
	}
	if !ac.JWTKeyProvider.HasSourceURIsConfigured() {
		return nil, nil, fmt.Errorf("authorizer cartwright: global.authorization.jwtKeyProvider.keySourceURIs is empty")
	}
	issuer := os.Getenv("CARTWRIGHT_OIDC_ISSUER")
	if issuer == "" {
		return nil, nil, fmt.Errorf("authorizer cartwright: CARTWRIGHT_OIDC_ISSUER is empty")
	}
	policy, err := authz.LoadPolicy(os.Getenv("CARTWRIGHT_TEMPORAL_POLICY"))
	if err != nil {
		return nil, nil, err
	}
	// Temporal's default JWT claim mapper on the provider's JWKS verifies
	// every token; ours reads the identity from it.
	jwtMapper := authorization.NewDefaultJWTClaimMapper(authorization.NewDefaultTokenKeyProvider(ac, logger), ac, logger)
	cm := authz.NewClaimMapper(jwtMapper, authz.MapperConfig{
		Issuer:            issuer,
		GroupsClaim:       cmp.Or(os.Getenv("CARTWRIGHT_OIDC_GROUPS_CLAIM"), "groups"),
		InternodeCN:       os.Getenv("CARTWRIGHT_TEMPORAL_INTERNODE_CN"),
		InternodeIssuerCN: os.Getenv("CARTWRIGHT_TEMPORAL_INTERNODE_CA_CN"),
	})
	return authz.NewAuthorizer(policy, logger), cm, nil
}
