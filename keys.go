package mediamock

import (
	"fmt"
	"strings"

	"github.com/mediamock/mediamock/fixtures"
)

// Key is a well-known test credential of the server's fixture.
type Key struct {
	Token       string
	Type        string // api_key or oauth
	Workspace   string
	Plan        string
	Scopes      []string
	Description string
}

// DefaultKeys lists the API keys and access tokens of the fixture, the
// credentials tests use. With the embedded default they are:
//
//	mk_test_all_scopes     Acme Studio (pro): read, generate, publish
//	mk_test_read_only      Acme Studio: read
//	mk_test_generate_only  Acme Studio: generate
//	mk_test_publish_only   Acme Studio: publish
//	oat_test_acme_scheduler Acme Studio, OAuth: read, publish
//	mk_test_free_plan      Pixel Garage (free, 20 requests/min, no publishing)
//	mk_test_business       Northwind Media (business, 600 requests/min)
//	mk_test_no_credits     Empty Wallet Co (0 credits)
func (s *Server) DefaultKeys() []Key { return keysOf(s.eng.World()) }

// FixtureKeys lists the keys of a fixture file ("" for the embedded
// default) without starting a server.
func FixtureKeys(fixturesPath string, seed uint64) ([]Key, error) {
	w, err := loadWorld(Options{FixturesPath: fixturesPath, Seed: seed})
	if err != nil {
		return nil, err
	}
	return keysOf(w), nil
}

func keysOf(w *fixtures.World) []Key {
	var out []Key
	for _, ws := range w.Workspaces {
		add := func(typ string, token, name string, scopes []string) {
			out = append(out, Key{Token: token, Type: typ, Workspace: ws.Name, Plan: ws.Plan, Scopes: scopes,
				Description: fmt.Sprintf("%s, %s plan, %s: %s", ws.Name, ws.Plan, name, strings.Join(scopes, " "))})
		}
		for _, k := range ws.APIKeys {
			add("api_key", k.Token, k.Name, k.Scopes)
		}
		for _, k := range ws.OAuthTokens {
			add("oauth", k.Token, k.Name, k.Scopes)
		}
	}
	return out
}

// Well-known tokens of the embedded default fixture.
const (
	KeyAllScopes    = "mk_test_all_scopes"
	KeyReadOnly     = "mk_test_read_only"
	KeyGenerateOnly = "mk_test_generate_only"
	KeyPublishOnly  = "mk_test_publish_only"
	TokenOAuth      = "oat_test_acme_scheduler"
	KeyFreePlan     = "mk_test_free_plan"
	KeyBusiness     = "mk_test_business"
	KeyNoCredits    = "mk_test_no_credits"
)
