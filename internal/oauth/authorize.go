package oauth

import (
	"crypto/subtle"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/sim"
)

// The authorization endpoint (OAuth 2.1, 4.1), its consent page and the
// codes it hands out.

// grant is what an authorization code stands for.
type grant struct {
	clientID    string
	redirectURI string
	challenge   string
	workspace   uint64
	scopes      []string
	// resources are the protected resources the grant's tokens are bound
	// to ("/mcp", "/api/v1"); empty: every one.
	resources []string
	expires   time.Time
	used      bool
	family    *family // the tokens issued from it, once exchanged

	t    *tenant // the tenant that holds it (tenants.go)
	seq  uint64  // the order it was issued in
	live bool    // pending: neither used nor expired, it holds its client in its tenant
}

// authRequest is an authorization request's parameters.
type authRequest struct {
	ResponseType, ClientID, RedirectURI, Challenge, Method, Scope, State, Resource string
}

func readAuthRequest(v url.Values) authRequest {
	return authRequest{ResponseType: v.Get("response_type"), ClientID: v.Get("client_id"), RedirectURI: v.Get("redirect_uri"),
		Challenge: v.Get("code_challenge"), Method: v.Get("code_challenge_method"), Scope: v.Get("scope"),
		State: v.Get("state"), Resource: v.Get("resource")}
}

// authorize is the authorization endpoint: GET shows the consent page (or
// approves at once with Approve set), POST is the page's answer; form is
// the error of reading its form (readForm).
func (s *Server) authorize(w *edge.Writer, r *http.Request, root string, form error) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		only(w, r, http.MethodGet)
		return
	}
	if form != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "The consent form cannot be read: "+form.Error()+".")
		return
	}
	params := r.URL.Query()
	if r.Method == http.MethodPost {
		params = r.PostForm
	}
	req := readAuthRequest(params)
	rep := repeated(params)
	if rep == "client_id" || rep == "redirect_uri" {
		oauthError(w, http.StatusBadRequest, "invalid_request", rep+" is given more than once (RFC 6749, 3.1).")
		return
	}
	// A request whose client or redirect URI is wrong is not sent back
	// to that URI (RFC 6749, 4.1.2.1): the error is the answer.
	s.mu.Lock()
	c := s.clients[req.ClientID]
	s.mu.Unlock()
	if c == nil {
		oauthError(w, http.StatusBadRequest, "invalid_client", "Unknown client "+strconv.Quote(req.ClientID)+": register it at "+RegisterPath+" first.")
		return
	}
	redirect := req.RedirectURI
	if redirect == "" && len(c.RedirectURIs) == 1 {
		redirect = c.RedirectURIs[0]
	}
	if strings.Contains(redirect, "#") {
		oauthError(w, http.StatusBadRequest, "invalid_request", "redirect_uri "+strconv.Quote(req.RedirectURI)+
			" has a fragment: a redirect URI must not have one (RFC 6749, 3.1.2).")
		return
	}
	if !registeredRedirect(c.RedirectURIs, redirect) {
		oauthError(w, http.StatusBadRequest, "invalid_request", "redirect_uri "+strconv.Quote(req.RedirectURI)+" is not one the client registered.")
		return
	}
	back := func(query url.Values) {
		u, _ := url.Parse(redirect)
		q := u.Query()
		for k, v := range query {
			q[k] = v
		}
		if req.State != "" {
			q.Set("state", req.State)
		}
		q.Set("iss", root) // RFC 9207
		u.RawQuery = q.Encode()
		w.Header().Set("Location", u.String())
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusFound)
	}
	fail := func(code, description string) {
		back(url.Values{"error": {code}, "error_description": {description}})
	}
	scopes := strings.Fields(req.Scope)
	bound, bad := audience(root, params["resource"])
	registered := strings.Fields(c.Scope)
	switch {
	case rep != "":
		fail("invalid_request", rep+" is given more than once (RFC 6749, 3.1).")
		return
	case req.ResponseType == "":
		fail("invalid_request", "response_type is missing: send response_type=code.")
		return
	case req.ResponseType != "code":
		fail("unsupported_response_type", "response_type must be code.")
		return
	case req.Challenge == "":
		fail("invalid_request", "PKCE is required: send code_challenge and code_challenge_method=S256.")
		return
	case req.Method != "S256":
		fail("invalid_request", "code_challenge_method must be S256.")
		return
	case unknownScopes(scopes) != "":
		fail("invalid_scope", "Unknown scope "+strconv.Quote(unknownScopes(scopes))+": the scopes are read, generate and publish.")
		return
	case beyond(scopes, registered) != "":
		fail("invalid_scope", "Scope "+strconv.Quote(beyond(scopes, registered))+" is beyond the client's registered scope ("+c.Scope+").")
		return
	case bad != "":
		fail("invalid_target", "The resource "+strconv.Quote(bad)+" is not this server's.")
		return
	}
	if len(scopes) == 0 {
		scopes = Scopes
		if len(registered) > 0 {
			scopes = registered
		}
	}
	workspace := s.Approve
	if r.Method == http.MethodPost {
		if params.Get("decision") != "approve" {
			fail("access_denied", "The user denied the request.")
			return
		}
		var granted []string
		for _, sc := range params["grant"] {
			if slices.Contains(scopes, sc) && !slices.Contains(granted, sc) {
				granted = append(granted, sc)
			}
		}
		if len(granted) == 0 {
			s.consent(w, http.StatusOK, req, c, redirect, scopes, "Grant at least one scope, or deny the request.")
			return
		}
		ws, problem := s.approver(params.Get("workspace"), params.Get("credential"))
		if problem != "" {
			// Refused: nothing is issued, and the client hears nothing.
			s.consent(w, http.StatusForbidden, req, c, redirect, scopes, problem)
			return
		}
		workspace = ws
		scopes = granted
	}
	if workspace == 0 {
		s.consent(w, http.StatusOK, req, c, redirect, scopes, "")
		return
	}
	if !s.workspaceExists(workspace) {
		fail("server_error", "Workspace "+strconv.FormatUint(workspace, 10)+" does not exist.")
		return
	}
	code := "oac_" + random(16)
	s.mu.Lock()
	ended := s.approve(c, code, &grant{clientID: c.ID, redirectURI: req.RedirectURI, challenge: req.Challenge, workspace: workspace,
		scopes: slices.Clone(scopes), resources: bound, expires: s.env.Eng.Clock().Now().Add(CodeLifetime)})
	s.mu.Unlock()
	if err := s.revokeAll(ended); err != nil {
		edge.WriteError(w, err)
		return
	}
	back(url.Values{"code": {code}})
}

// sandboxChoice is the consent form's workspace for "the sandbox of the
// control token entered".
const sandboxChoice = "sandbox"

// approver checks who approves a consent: the workspace chosen and the
// credential entered. A sandbox's workspace needs the sandbox's own control
// token (or the server's); on a server with a control token every other
// workspace needs the server's. An open local server (no control token)
// approves its own workspaces without one. It returns the workspace, or
// why the approval is refused.
func (s *Server) approver(choice, credential string) (uint64, string) {
	server := s.env.ControlToken
	isServer := server != "" && subtle.ConstantTimeCompare([]byte(credential), []byte(server)) == 1
	if strings.HasPrefix(credential, "sbc_") {
		sb, ok := s.env.Eng.SandboxByControlToken(credential)
		if !ok {
			return 0, "The control token entered is not a live sandbox's."
		}
		if choice != "" && choice != sandboxChoice && choice != strconv.FormatUint(sb.WorkspaceID, 10) {
			return 0, "A sandbox's control token approves for its own workspace only: choose \"the sandbox of the control token\"."
		}
		return sb.WorkspaceID, ""
	}
	if choice == sandboxChoice {
		return 0, "Enter the sandbox's control token (sbc_…) to approve for a sandbox."
	}
	ws, err := strconv.ParseUint(choice, 10, 64)
	if err != nil || ws == 0 {
		return 0, "Choose a workspace."
	}
	if _, ok := s.env.Eng.SandboxOf(ws); ok && !isServer {
		return 0, "Workspace " + choice + " needs its control token to be approved."
	}
	switch {
	case server != "" && !isServer && credential == "":
		return 0, "This server has a control token: enter it to approve (or a sandbox's control token, for that sandbox)."
	case server != "" && !isServer:
		return 0, "The control token entered is wrong."
	case server == "" && credential != "":
		// As the control API: a credential sent must be valid.
		return 0, "The control token entered is not a live sandbox's, and this server has none of its own: leave the field empty to approve for one of its workspaces."
	}
	return ws, ""
}

// beyond names the first scope of asked that the client's registered
// scope (when it registered one) does not hold, "" when none.
func beyond(asked, registered []string) string {
	if len(registered) == 0 {
		return ""
	}
	for _, sc := range asked {
		if !slices.Contains(registered, sc) {
			return sc
		}
	}
	return ""
}

func (s *Server) workspaceExists(id uint64) bool {
	ws, err := s.env.Eng.Workspaces()
	if err != nil {
		return false
	}
	return slices.ContainsFunc(ws, func(w sim.Workspace) bool { return w.ID == id })
}

// consent shows the consent page: the client, where the code will go, a
// workspace to choose (the server's own; a sandbox is reached by its
// control token, and never listed), the credential field, the scopes asked
// (each can be left out), approve or deny.
func (s *Server) consent(w *edge.Writer, status int, req authRequest, c *client, redirect string, scopes []string, problem string) {
	all, err := s.env.Eng.Workspaces()
	if err != nil {
		edge.WriteError(w, err)
		return
	}
	var ws []sim.Workspace
	for _, x := range all {
		if _, ok := s.env.Eng.SandboxOf(x.ID); !ok {
			ws = append(ws, x)
		}
	}
	name := c.Name
	if name == "" {
		name = c.ID
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// No form-action: browsers apply it to the redirect that follows the
	// form, and the redirect goes to the client.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = consentPage().Execute(w, map[string]any{"Client": name, "ClientID": c.ID, "Redirect": redirect, "Request": req, "Scopes": scopes,
		"Workspaces": ws, "Problem": problem, "Closed": s.env.ControlToken != "", "Sandbox": sandboxChoice})
}

// consentPage is the consent form, parsed on its first showing.
var consentPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authorize {{.Client}} (mediamock)</title>
<style>body{font:15px system-ui,sans-serif;max-width:34em;margin:3em auto;padding:0 1em}fieldset{margin:1em 0}.problem{color:#a00}code{word-break:break-all}</style></head>
<body><h1>Authorize {{.Client}}</h1>
<p>{{.Client}} (client <code>{{.ClientID}}</code>) asks to use the media generation service (the mock) on your behalf.</p>
<p>The authorization code will be sent to <code>{{.Redirect}}</code>.</p>
{{if .Problem}}<p class="problem" role="alert">{{.Problem}}</p>{{end}}
<form method="post">
<input type="hidden" name="response_type" value="{{.Request.ResponseType}}">
<input type="hidden" name="client_id" value="{{.Request.ClientID}}">
<input type="hidden" name="redirect_uri" value="{{.Request.RedirectURI}}">
<input type="hidden" name="code_challenge" value="{{.Request.Challenge}}">
<input type="hidden" name="code_challenge_method" value="{{.Request.Method}}">
<input type="hidden" name="scope" value="{{.Request.Scope}}">
<input type="hidden" name="state" value="{{.Request.State}}">
<input type="hidden" name="resource" value="{{.Request.Resource}}">
<fieldset><legend>Workspace</legend>
{{range $i, $w := .Workspaces}}<label><input type="radio" name="workspace" value="{{$w.ID}}"{{if eq $i 0}} checked{{end}}> {{$w.Name}} ({{$w.Plan}}, id {{$w.ID}})</label><br>
{{end}}<label><input type="radio" name="workspace" value="{{.Sandbox}}"{{if not .Workspaces}} checked{{end}}> The sandbox of the control token below</label><br>
</fieldset>
<fieldset><legend>Control token</legend>
<label>{{if .Closed}}The server's control token, or a sandbox's (sbc_…) for that sandbox{{else}}A sandbox's control token (sbc_…), to approve for that sandbox{{end}}:
<input type="password" name="credential" autocomplete="off"></label>
</fieldset>
<fieldset><legend>Scopes</legend>
{{range .Scopes}}<label><input type="checkbox" name="grant" value="{{.}}" checked> {{.}}</label><br>
{{end}}</fieldset>
<button name="decision" value="approve">Approve</button> <button name="decision" value="deny">Deny</button>
</form></body></html>
`))
})
