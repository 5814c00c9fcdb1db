package mediamock_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
)

// The quick start's journey over --tls with clients of other languages:
// with the printed authority they get through (account, an image, its URL
// as an upload's source); without it they fail as TLS clients should. A
// client missing here is skipped.
func TestTLSJourneyWithOtherClients(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithTLS())
	ca := srv.CAFile()
	api := srv.BaseURL()
	scripts := map[string]struct {
		bin  string
		args func(withCA bool) []string
		env  func(withCA bool) []string
	}{
		"curl": {"curl", func(withCA bool) []string {
			script := `set -e
A="Authorization: Bearer mk_test_all_scopes"; J="Content-Type: application/json"; C="$CURL_CA"
curl -sS --fail-with-body $C "$API/account" -H "$A" > /dev/null
U=$(curl -sS --fail-with-body $C "$API/generations" -H "$A" -H "$J" -d '{"modality":"image","model_id":"flux-2-pro","prompt":"a fox","wait_seconds":30}' | sed 's/.*"url":"\([^"]*\)".*/\1/')
curl -sS --fail-with-body $C "$API/uploads" -H "$A" -H "$J" -d "{\"image_url\":\"$U\"}" | grep -q '"status":"completed"'
echo ok`
			return []string{"-c", script}
		}, func(withCA bool) []string {
			if withCA {
				return []string{"CURL_CA=--cacert " + ca}
			}
			return []string{"CURL_CA="}
		}},
		"python": {"python3", func(bool) []string {
			return []string{"-c", `
import json, os, ssl, urllib.request
ctx = ssl.create_default_context(cafile=os.environ.get("CA") or None)
def call(path, body=None):
    req = urllib.request.Request(os.environ["API"] + path, data=json.dumps(body).encode() if body else None,
        headers={"Authorization": "Bearer mk_test_all_scopes", "Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req, context=ctx))
call("/account")
g = call("/generations", {"modality": "image", "model_id": "flux-2-pro", "prompt": "a fox", "wait_seconds": 30})
assert call("/uploads", {"image_url": g["assets"][0]["url"]})["status"] == "completed"
print("ok")`}
		}, func(withCA bool) []string {
			if withCA {
				return []string{"CA=" + ca}
			}
			return []string{"CA="}
		}},
		"node": {"node", func(bool) []string {
			return []string{"--input-type=module", "-e", `
const h = { Authorization: "Bearer mk_test_all_scopes", "Content-Type": "application/json" };
const call = async (path, body) => {
  const r = await fetch(process.env.API + path, body ? { method: "POST", headers: h, body: JSON.stringify(body) } : { headers: h });
  if (!r.ok) throw new Error(path + " " + r.status);
  return r.json();
};
await call("/account");
const g = await call("/generations", { modality: "image", model_id: "flux-2-pro", prompt: "a fox", wait_seconds: 30 });
const u = await call("/uploads", { image_url: g.assets[0].url });
if (u.status !== "completed") throw new Error("upload " + u.status);
console.log("ok");`}
		}, func(withCA bool) []string {
			if withCA {
				return []string{"NODE_EXTRA_CA_CERTS=" + ca}
			}
			return nil
		}},
	}
	for name, sc := range scripts {
		t.Run(name, func(t *testing.T) {
			bin, err := exec.LookPath(sc.bin)
			if err != nil {
				t.Skipf("no %s here", sc.bin)
			}
			if name == "curl" {
				if bin, err = exec.LookPath("sh"); err != nil {
					t.Skip("no sh here")
				}
			}
			for _, withCA := range []bool{true, false} {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				cmd := exec.CommandContext(ctx, bin, sc.args(withCA)...)
				cmd.Env = append(append(os.Environ(), "API="+api, "HOME="+t.TempDir(), "SSL_CERT_FILE="+filepath.Join(t.TempDir(), "none.pem")), sc.env(withCA)...)
				out, err := cmd.CombinedOutput()
				cancel()
				if withCA {
					require.NoError(t, err, "with the authority: %s", out)
					assert.Equal(t, "ok", strings.TrimSpace(string(out)))
				} else {
					assert.Error(t, err, "without the authority the client must refuse the server: %s", out)
					assert.Regexp(t, `(?i)certificate|SSL|verify`, string(out))
				}
			}
		})
	}
}
