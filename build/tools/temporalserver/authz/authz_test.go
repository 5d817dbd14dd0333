package authz

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v4"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"google.golang.org/grpc/credentials"
)

const issuer = "http://127.0.0.1:7422/"

// keys is a TokenKeyProvider holding one RSA key (the provider's JWKS).
type keys struct{ pub *rsa.PublicKey }

func (k keys) EcdsaKey(string, string) (*ecdsa.PublicKey, error) {
	return nil, fmt.Errorf("no ec keys")
}
func (k keys) HmacKey(string, string) ([]byte, error) { return nil, fmt.Errorf("no hmac keys") }
func (k keys) RsaKey(_, kid string) (*rsa.PublicKey, error) {
	if kid != "k1" {
		return nil, fmt.Errorf("no key %s", kid)
	}
	return k.pub, nil
}
func (k keys) SupportedMethods() []string { return []string{jwt.SigningMethodRS256.Name} }
func (k keys) Close()                     {}

type fixture struct {
	t      *testing.T
	key    *rsa.PrivateKey
	mapper *ClaimMapper
	authz  *Authorizer
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	_, file, _, _ := runtime.Caller(0)
	p, err := LoadPolicy(filepath.Join(filepath.Dir(file), "../../../../deploy/temporal/authorization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ac := &config.Authorization{}
	m := NewClaimMapper(authorization.NewDefaultJWTClaimMapper(keys{&key.PublicKey}, ac, log.NewNoopLogger()),
		MapperConfig{Issuer: issuer, GroupsClaim: "groups", InternodeCN: "temporal-internode",
			InternodeIssuerCN: "cartwright cluster internode CA"})
	return &fixture{t: t, key: key, mapper: m, authz: NewAuthorizer(p, nil)}
}

// token signs claims with key (the provider's unless the test forges).
func (f *fixture) token(key *rsa.PrivateKey, claims jwt.MapClaims) string {
	f.t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = "k1"
	s, err := tok.SignedString(key)
	if err != nil {
		f.t.Fatal(err)
	}
	return "Bearer " + s
}

func service(id string) jwt.MapClaims {
	return jwt.MapClaims{"iss": issuer, "sub": id, "client_id": id, "exp": time.Now().Add(time.Hour).Unix()}
}

func staff(sub string, groups ...string) jwt.MapClaims {
	return jwt.MapClaims{"iss": issuer, "sub": sub, "client_id": "cartwright-web-ui", "groups": groups,
		"exp": time.Now().Add(time.Hour).Unix()}
}

// decide runs a call through the mapper and the authorizer as the
// frontend's interceptor does; an error of the mapper is a refusal.
func (f *fixture) decide(ai *authorization.AuthInfo, method string, req any) bool {
	f.t.Helper()
	claims, err := f.mapper.GetClaims(ai)
	if err != nil {
		return false
	}
	res, err := f.authz.Authorize(context.Background(), claims, &authorization.CallTarget{
		APIName: api.WorkflowServicePrefix + method, Namespace: "default", Request: req})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.Decision == authorization.DecisionAllow
}

func bearer(tok string) *authorization.AuthInfo { return &authorization.AuthInfo{AuthToken: tok} }

func poll(queue string) *workflowservice.PollWorkflowTaskQueueRequest {
	return &workflowservice.PollWorkflowTaskQueueRequest{Namespace: "default", TaskQueue: &taskqueuepb.TaskQueue{Name: queue}}
}

func start(wfType string) *workflowservice.StartWorkflowExecutionRequest {
	return &workflowservice.StartWorkflowExecutionRequest{Namespace: "default", WorkflowType: &commonpb.WorkflowType{Name: wfType},
		TaskQueue: &taskqueuepb.TaskQueue{Name: "cartwright"}}
}

func update(name string) *workflowservice.UpdateWorkflowExecutionRequest {
	return &workflowservice.UpdateWorkflowExecutionRequest{Namespace: "default",
		Request: &updatepb.Request{Input: &updatepb.Input{Name: name}}}
}

func TestOnlyTheWorkerPollsCartwrightsQueue(t *testing.T) {
	f := newFixture(t)
	worker := bearer(f.token(f.key, service("cartwright-worker")))
	if !f.decide(worker, "PollWorkflowTaskQueue", poll("cartwright")) {
		t.Fatal("the worker may not poll its queue")
	}
	sticky := &workflowservice.PollWorkflowTaskQueueRequest{TaskQueue: &taskqueuepb.TaskQueue{
		Name: "host:1234", Kind: enumspb.TASK_QUEUE_KIND_STICKY, NormalName: "cartwright"}}
	if !f.decide(worker, "PollWorkflowTaskQueue", sticky) {
		t.Fatal("the worker may not poll its sticky queue")
	}
	if f.decide(worker, "PollWorkflowTaskQueue", poll("elsewhere")) {
		t.Fatal("the worker polls a queue that is not cartwright's")
	}
	for name, who := range map[string]jwt.MapClaims{
		"backend": service("cartwright-backend"), "gateway": service("cartwright-mcp-gateway"),
		"admin": staff("ada", "admin"), "unknown client": service("someone-else"),
	} {
		ai := bearer(f.token(f.key, who))
		if f.decide(ai, "PollWorkflowTaskQueue", poll("cartwright")) {
			t.Errorf("%s polls cartwright's queue", name)
		}
		if f.decide(ai, "RespondActivityTaskCompleted", &workflowservice.RespondActivityTaskCompletedRequest{}) {
			t.Errorf("%s completes an activity task", name)
		}
	}
	// A sticky queue naming cartwright's as its normal queue is no way in.
	backend := bearer(f.token(f.key, service("cartwright-backend")))
	if f.decide(backend, "PollWorkflowTaskQueue", sticky) {
		t.Fatal("the backend polls cartwright's sticky queue")
	}
}

func TestServicesStartAndSendOnlyTheirOwn(t *testing.T) {
	f := newFixture(t)
	gw := bearer(f.token(f.key, service("cartwright-mcp-gateway")))
	if !f.decide(gw, "StartWorkflowExecution", start("DraftOrder")) || !f.decide(gw, "UpdateWorkflowExecution", update("confirm_total")) {
		t.Fatal("the gateway may not start a draft order or confirm it")
	}
	elsewhere := start("DraftOrder")
	elsewhere.TaskQueue.Name = "my-own-queue"
	if f.decide(gw, "StartWorkflowExecution", elsewhere) {
		t.Fatal("the gateway starts a draft order on a queue of its own")
	}
	for _, c := range []struct {
		method string
		req    any
	}{
		{"StartWorkflowExecution", start("Reconcile")},
		{"StartWorkflowExecution", start("Onboarding")},
		{"UpdateWorkflowExecution", update("decide_approval")},
		{"SignalWorkflowExecution", &workflowservice.SignalWorkflowExecutionRequest{SignalName: "approval"}},
		{"TerminateWorkflowExecution", &workflowservice.TerminateWorkflowExecutionRequest{}},
		{"ResetWorkflowExecution", &workflowservice.ResetWorkflowExecutionRequest{}},
		{"CreateSchedule", &workflowservice.CreateScheduleRequest{}},
		{"ExecuteMultiOperation", &workflowservice.ExecuteMultiOperationRequest{Operations: []*workflowservice.ExecuteMultiOperationRequest_Operation{
			{Operation: &workflowservice.ExecuteMultiOperationRequest_Operation_StartWorkflow{StartWorkflow: start("DraftOrder")}},
			{Operation: &workflowservice.ExecuteMultiOperationRequest_Operation_UpdateWorkflow{UpdateWorkflow: update("decide_approval")}},
		}}},
	} {
		if f.decide(gw, c.method, c.req) {
			t.Errorf("the gateway may %s %v", c.method, c.req)
		}
	}
}

func TestStaffReadDecideAndOnlyAdminDestroys(t *testing.T) {
	f := newFixture(t)
	support := bearer(f.token(f.key, staff("sam", "support")))
	admin := bearer(f.token(f.key, staff("ada", "admin")))
	nobody := bearer(f.token(f.key, staff("nina")))
	list := &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"}
	if !f.decide(support, "ListWorkflowExecutions", list) || !f.decide(support, "UpdateWorkflowExecution", update("decide_approval")) ||
		!f.decide(support, "SignalWorkflowExecution", &workflowservice.SignalWorkflowExecutionRequest{SignalName: "approval"}) {
		t.Fatal("support may not list or decide")
	}
	if f.decide(nobody, "ListWorkflowExecutions", list) {
		t.Fatal("a member of no group lists runs")
	}
	for _, m := range []string{"TerminateWorkflowExecution", "ResetWorkflowExecution", "DeleteWorkflowExecution", "StartBatchOperation"} {
		if f.decide(support, m, nil) {
			t.Errorf("support may %s", m)
		}
		if !f.decide(admin, m, nil) {
			t.Errorf("admin may not %s", m)
		}
	}
	if f.decide(support, "StartWorkflowExecution", start("DraftOrder")) || f.decide(support, "UpdateWorkflowExecution", update("confirm_total")) {
		t.Fatal("support starts or confirms a customer's order")
	}
}

func TestTokensThatAreNotTheProvidersAreRefused(t *testing.T) {
	f := newFixture(t)
	list := &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	expired := staff("ada", "admin")
	expired["exp"] = time.Now().Add(-time.Minute).Unix()
	foreign := staff("ada", "admin")
	foreign["iss"] = "http://evil.example/"
	for name, ai := range map[string]*authorization.AuthInfo{
		"no token":       {},
		"no auth info":   nil,
		"expired":        bearer(f.token(f.key, expired)),
		"other issuer":   bearer(f.token(f.key, foreign)),
		"other key":      bearer(f.token(other, staff("ada", "admin"))),
		"not bearer":     {AuthToken: "Basic YWRhOmFkYQ=="},
		"unsigned":       {AuthToken: "Bearer " + unsigned(t, staff("ada", "admin"))},
		"client CA cert": {TLSConnection: tlsWith(t, "cartwright-client", "cartwright cluster client CA")},
	} {
		if f.decide(ai, "ListWorkflowExecutions", list) {
			t.Errorf("%s: let in", name)
		}
	}
	node := &authorization.AuthInfo{TLSConnection: tlsWith(t, "temporal-internode", "cartwright cluster internode CA")}
	if !f.decide(node, "TerminateWorkflowExecution", &workflowservice.TerminateWorkflowExecutionRequest{}) {
		t.Fatal("internode traffic refused")
	}
	fake := &authorization.AuthInfo{TLSConnection: tlsWith(t, "temporal-internode", "cartwright cluster client CA")}
	if f.decide(fake, "ListWorkflowExecutions", list) {
		t.Fatal("an internode name on a client CA's certificate let in")
	}
	if !f.decide(&authorization.AuthInfo{}, "GetSystemInfo", &workflowservice.GetSystemInfoRequest{}) {
		t.Fatal("GetSystemInfo (a health check) refused without a token")
	}
}

func unsigned(t *testing.T, c jwt.MapClaims) string {
	s, err := jwt.NewWithClaims(jwt.SigningMethodNone, c).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tlsWith is a TLS connection whose peer presented a certificate of cn
// issued by issuerCN (the chain was checked by the TLS layer).
func tlsWith(t *testing.T, cn, issuerCN string) *credentials.TLSInfo {
	t.Helper()
	ca := &x509.Certificate{Subject: pkix.Name{CommonName: issuerCN}}
	cert := &x509.Certificate{Subject: pkix.Name{CommonName: cn}, Issuer: ca.Subject}
	return &credentials.TLSInfo{State: tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert, ca},
		VerifiedChains: [][]*x509.Certificate{{cert, ca}}}}
}
