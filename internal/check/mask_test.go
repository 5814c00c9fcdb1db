package check_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mediamock/mediamock/internal/check"
)

func TestMask(t *testing.T) {
	long := check.MaskValue("mk_test_all_scopes")
	assert.Regexp(t, `^\*\*\*[0-9a-f]{8}$`, long)
	assert.Equal(t, "Bearer "+long, check.Mask("Bearer mk_test_all_scopes"))
	assert.Equal(t, "bearer "+long, check.Mask("bearer   mk_test_all_scopes "))
	assert.Equal(t, "Bearer ***", check.Mask("Bearer short_token"), "a short secret gets no digest")
	assert.Equal(t, long, check.Mask("mk_test_all_scopes"), "no scheme: all of it is the secret")
	assert.Equal(t, check.MaskValue("sk-live4242 second-part"), check.Mask("sk-live4242 second-part"), "an unknown first word may be part of the secret")
	assert.Equal(t, "Basic "+check.MaskValue("dXNlcjpwYXNzd29yZA=="), check.Mask("Basic dXNlcjpwYXNzd29yZA=="))
	assert.Equal(t, "(none)", check.Mask(""))
}

func TestSafeQueryAndPath(t *testing.T) {
	secrets := check.RequestSecrets(http.Header{"Cookie": {"lang=en; session=Opaque-session-value"}}, nil, nil)
	q := url.Values{"q": {"find Opaque-session-value here"}, "limit": {"10"}, "pass": {"pw"}, "cursor": {"Zq81vX0pLm4nR7tY2wK9"}, "x": {"mk_test_all_scopes"}}
	got := check.SafeQuery(q, secrets)
	assert.Equal(t, "cursor="+check.MaskValue("Zq81vX0pLm4nR7tY2wK9")+"&limit=10&pass=***&q=find+"+check.MaskValue("Opaque-session-value")+"+here&x="+check.MaskValue("mk_test_all_scopes"), got)
	assert.Equal(t, "/api/v1/assets/"+check.MaskValue("Zq81vX0pLm4nR7tY2wK9")+"/x", check.SafePath("/api/v1/assets/Zq81vX0pLm4nR7tY2wK9/x", nil))
	assert.Equal(t, "/api/v1/models/stable-diffusion-xl-1024", check.SafePath("/api/v1/models/stable-diffusion-xl-1024", nil), "an id is not a token")
	body := []byte(`{"prompt":"a cat","auth":{"value":"hunter2hunter2"},"list":["oat_test_token"]}`)
	s := check.RequestSecrets(http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("u:basic-password"))}}, nil, body)
	for _, secret := range []string{"hunter2hunter2", "basic-password", "oat_test_token"} {
		assert.NotContains(t, s.Scrub("said "+secret+" and "+url.QueryEscape(secret)), secret)
	}
}
